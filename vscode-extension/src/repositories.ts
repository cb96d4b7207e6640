/**
 * Scope "all": the panel's sessions grouped by repository, as the GitHub Pull Requests tree groups
 * them: a repository node (its top folder) above its Team node and its sessions. A session's
 * repository is the daemon's (`checkpoint/sessions` names it), else the Team folder or workspace
 * folder holding its folder, else its own folder. Plain data, like treeNodes.ts.
 */

import * as path from 'node:path';

import { TEAM_AGENT } from './constants';
import type { SessionStatus } from './protocol';
import { pathOfUri } from './rowText';
import type { Node, TeamNode } from './treeNodes';

function within(folder: string, p: string): boolean {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The repository a session is listed under in scope "all": the daemon's (checkpoint/sessions), else
 * the Team folder (a repository's top folder) or workspace folder holding its folder, else its folder.
 */
export function repositoryOf(session: SessionStatus, teamFolders: readonly string[]): string {
  if (session.agent === TEAM_AGENT) {
    return session.cwd ?? session.id;
  }
  if (session.repository) {
    return session.repository;
  }
  const cwd = session.cwd;
  if (!cwd) {
    return '';
  }
  const team = teamFolders.filter((f) => within(f, cwd)).sort((a, b) => b.length - a.length)[0];
  if (team) {
    return team;
  }
  const workspace = session.workspace ? pathOfUri(session.workspace) : undefined;
  return workspace && within(workspace, cwd) ? workspace : cwd;
}

/** Newest turn first (sessions without a turn last). */
export function byNewest(a: SessionStatus, b: SessionStatus): number {
  return (b.last_ts ?? '').localeCompare(a.last_ts ?? '');
}

/** Scope "all": one node per repository, the one with the newest session first, Team-only ones last. */
export function repositoryNodes(teams: TeamNode[], sessions: SessionStatus[]): Node[] {
  const teamFolders = teams.map((t) => t.session.cwd ?? t.session.id);
  const repos = new Map<string, { teams: TeamNode[]; sessions: SessionStatus[] }>();
  const entry = (folder: string) => {
    let found = repos.get(folder);
    if (!found) {
      found = { teams: [], sessions: [] };
      repos.set(folder, found);
    }
    return found;
  };
  for (const team of teams) {
    entry(repositoryOf(team.session, teamFolders)).teams.push(team);
  }
  for (const session of [...sessions].sort(byNewest)) {
    entry(repositoryOf(session, teamFolders)).sessions.push(session);
  }
  const newest = (r: { sessions: SessionStatus[] }): string => r.sessions[0]?.last_ts ?? '';
  return [...repos.entries()]
    .sort(([fa, a], [fb, b]) => newest(b).localeCompare(newest(a)) || fa.localeCompare(fb))
    .map(([folder, r]) => ({ type: 'repository' as const, folder, teams: r.teams, sessions: r.sessions }));
}

/** Under a repository: its Team node, then its sessions (newest first). */
export function repositoryChildren(node: Extract<Node, { type: 'repository' }>): Node[] {
  return [...node.teams, ...node.sessions.map((session) => ({ type: 'session' as const, session }))];
}
