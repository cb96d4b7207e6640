/**
 * The workspace's sessions, kept from the deltas `checkpoint/status` carries (issue 32: whole, they
 * made every status grow with the workspace's sessions). Each message says which version of the list
 * its delta applies to (`since`); one that does not follow on from this copy (a status missed, a
 * daemon that was already running) is a gap: the whole list is asked for
 * (`checkpoint/workspaceSessions`, which answers with its version), the messages that came meanwhile
 * are held and applied after it. The surfaces get a {@link Status} with every session of the
 * workspace; its totals are the message's own, exact in every status, gap or not.
 */

import type { SessionStatus, Status, StatusMessage, WorkspaceSessionsDelta, WorkspaceSessionsResult } from './protocol';

/** The daemon's order of sessions: newest turn first, then by id. */
export function newestFirst(sessions: Iterable<SessionStatus>): SessionStatus[] {
  return [...sessions].sort((a, b) => (b.last_ts ?? '').localeCompare(a.last_ts ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export interface SessionMirrorOptions {
  /** Ask the daemon for the whole list (`checkpoint/workspaceSessions`). */
  fetchAll(): Promise<WorkspaceSessionsResult>;
  /** A status to show, with the workspace's sessions as this copy has them. */
  show(status: Status): void;
  /** The whole list could not be had; the next status asks again. */
  onError?(err: unknown): void;
}

export class SessionMirror {
  private byId = new Map<string, SessionStatus>();
  private version = 0;
  private sorted: SessionStatus[] | undefined;
  /** Messages that came while the whole list was being asked for, in order; undefined: not asking. */
  private held: StatusMessage[] | undefined;
  /** Bumped by reset: an answer to a question asked before it is not applied. */
  private generation = 0;

  constructor(private readonly opts: SessionMirrorOptions) {}

  /** The version of the list this copy is at. */
  get at(): number {
    return this.version;
  }

  /** Forget everything: a new daemon starts its versions again. */
  reset(): void {
    this.byId.clear();
    this.version = 0;
    this.sorted = undefined;
    this.held = undefined;
    this.generation++;
  }

  /** One `checkpoint/status` notification. */
  receive(message: StatusMessage): void {
    if (this.held) {
      this.held.push(message);
    } else if (!this.apply(message.workspace_sessions)) {
      this.held = [message];
      void this.catchUp();
    }
    this.opts.show(this.view(message));
  }

  /** Apply a delta; false (and nothing changed) when it does not follow on from this copy. */
  private apply(delta: WorkspaceSessionsDelta): boolean {
    if (delta.since === 0) {
      this.byId.clear(); // a delta from nothing: the whole list
    } else if (delta.version <= this.version) {
      return true; // nothing changed, or already in a list asked for since
    } else if (delta.since !== this.version) {
      return false;
    }
    for (const session of delta.changed) {
      this.byId.set(session.id, session);
    }
    for (const id of delta.removed) {
      this.byId.delete(id);
    }
    if (delta.changed.length || delta.removed.length || delta.since === 0) {
      this.sorted = undefined;
    }
    this.version = delta.version;
    return true;
  }

  private async catchUp(): Promise<void> {
    const generation = this.generation;
    let answer: WorkspaceSessionsResult;
    try {
      answer = await this.opts.fetchAll();
    } catch (err) {
      if (generation === this.generation) {
        this.held = undefined; // still out of step: the next status asks again
        this.opts.onError?.(err);
      }
      return;
    }
    if (generation !== this.generation) {
      return;
    }
    this.byId = new Map(answer.sessions.map((s) => [s.id, s]));
    this.version = answer.version;
    this.sorted = undefined;
    const held = this.held ?? [];
    this.held = undefined;
    for (const [n, message] of held.entries()) {
      if (!this.apply(message.workspace_sessions)) {
        this.held = held.slice(n); // a gap after the answer too: ask again
        void this.catchUp();
        break;
      }
    }
    const last = held[held.length - 1];
    if (last) {
      this.opts.show(this.view(last));
    }
  }

  /** The message as the surfaces read it. */
  private view(message: StatusMessage): Status {
    this.sorted ??= newestFirst(this.byId.values());
    const status: Status & { workspace_sessions?: unknown } = { ...message, sessions: this.sorted };
    delete status.workspace_sessions;
    return status;
  }
}
