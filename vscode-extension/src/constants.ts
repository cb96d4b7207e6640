/**
 * Every id the extension shares with VS Code, its manifest or the daemon, in one place.
 *
 * - Ids the manifest declares (commands, views, settings) are the manifest's: each is named here by
 *   its suffix and looked up in package.json when this module loads, so an id missing from the
 *   manifest fails at once (and in every unit test) instead of doing nothing in the editor; the
 *   manifest test checks the other direction.
 * - Ids only the code knows (context values, the status bar item, the secret key) are written here.
 * - The daemon's names mirror `daemon/checkpoint/server/protocol.py`; the contract test compares them
 *   with the JSON the Python side writes (test/golden/protocol-names.json).
 *
 * test/manifest.test.ts fails on any `'checkpoint.` literal elsewhere in src/.
 */

import manifest from '../package.json';
import type { ItemKind } from './protocol';

/** The first part of every id, and the settings section. */
export const PREFIX = 'checkpoint';
export const SECTION = PREFIX;

/**
 * The daemon's Python distribution (pyproject's [project].name): what pip installs from the bundled
 * wheels and what a user installs by hand. Not "checkpoint": that name on PyPI is another project's.
 */
export const DISTRIBUTION = 'checkpoint-decisions';

type Id<N extends string> = `${typeof PREFIX}.${N}`;

function declared<N extends string>(name: N, what: string, ids: readonly string[]): Id<N> {
  const id = `${PREFIX}.${name}` as const;
  if (!ids.includes(id)) {
    throw new Error(`package.json declares no ${what} ${id}`);
  }
  return id;
}

const commandIds = manifest.contributes.commands.map((c) => c.command);
const command = <N extends string>(name: N): Id<N> => declared(name, 'command', commandIds);

/** VS Code command ids (contributes.commands). */
export const Commands = {
  checkpointNow: command('checkpointNow'),
  showLog: command('showLog'),
  restartDaemon: command('restartDaemon'),
  refresh: command('refresh'),
  exportDecisions: command('exportDecisions'),
  setApiKey: command('setApiKey'),
  goToCode: command('goToCode'),
  openTranscript: command('openTranscript'),
  acceptItem: command('acceptItem'),
  dismissItem: command('dismissItem'),
  copyItemMarkdown: command('copyItemMarkdown'),
  searchDecisions: command('searchDecisions'),
  markSuperseded: command('markSuperseded'),
  removeSupersession: command('removeSupersession'),
  shareWithTeam: command('shareWithTeam'),
  openTurn: command('openTurn'),
  openRecord: command('openRecord'),
  openSessionTranscript: command('openSessionTranscript'),
  forgetSession: command('forgetSession'),
  openProblemFile: command('openProblemFile'),
} as const;

/**
 * The extension's commands the daemon links to, in hover cards and as a diagnostic's code target
 * (protocol.py EDITOR_*): the only commands a daemon's Markdown may run. Arguments: [item_id].
 */
export const EditorCommands = {
  openTurn: Commands.openTurn,
  acceptItem: Commands.acceptItem,
  dismissItem: Commands.dismissItem,
  openRecord: Commands.openRecord,
} as const;

/** The scheme of Open Turn's read-only documents: `checkpoint-turn:/<item id>/turn.md`. */
export const TURN_SCHEME = `${PREFIX}-turn`;

/** The webview of Open Turn's rendered page (turnView.ts). */
export const TURN_VIEW_TYPE = `${PREFIX}.turn`;

/**
 * The turn page's link to the raw transcript line, arguments `[uri, line]` (1-based). Registered by
 * the extension, not declared for the palette: only the turn page's webview may run it
 * (`enableCommandUris`).
 */
export const OPEN_TRANSCRIPT_LINE = `${PREFIX}.openTranscriptLine`;

/** View ids (contributes.views). */
export const Views = {
  sessions: declared('sessions', 'view', Object.values(manifest.contributes.views).flat().map((v) => v.id)),
} as const;

const settingIds = Object.keys(manifest.contributes.configuration.properties);

/** Full ids of the settings that messages and the Open Settings button name. */
export const SettingIds = {
  command: declared('command', 'setting', settingIds),
  scope: declared('scope', 'setting', settingIds),
  sources: declared('sources', 'setting', settingIds),
} as const;

/**
 * Tree items' contextValue, which the manifest's `view/item/context` menus match with
 * `viewItem == ...` and `viewItem =~ /^checkpoint\.item\b.../`. An item's value is
 * `checkpoint.item state-<state> [files] [source] [superseded] [shared] [held] [record] [accept] [dismiss]`
 * (see treeNodes.ts itemContext).
 */
export const ContextValues = {
  message: `${PREFIX}.message`,
  session: `${PREFIX}.session`,
  cause: `${PREFIX}.cause`,
  group: `${PREFIX}.group`,
  item: `${PREFIX}.item`,
  team: `${PREFIX}.team`,
  recordProblem: `${PREFIX}.recordProblem`,
  repository: `${PREFIX}.repository`,
} as const;

/** Context keys the manifest's `when` clauses read. `empty`: 'workspace' or 'all' while the panel
 * has no session to list (its welcome view shows), else ''. */
export const ContextKeys = { empty: `${PREFIX}.empty` } as const;

/** The status bar item's id (VS Code keeps its visibility per id). */
export const STATUS_BAR_ITEM_ID = `${PREFIX}.status`;

/** The workspaceState key of the panel rows the user opened or closed (expansion.ts). */
export const PANEL_EXPANSION_KEY = `${PREFIX}.panelExpansion`;

/** The SecretStorage key of the Anthropic API key. */
export const API_KEY_SECRET = `${PREFIX}.anthropicApiKey`;

// -- the daemon's names (protocol.py) --------------------------------------------------------------

export const SERVER_NAME = 'checkpoint';

/** Custom LSP methods. */
export const Methods = {
  /**
   * Server -> client notification whenever a count or the run state changes. Params: StatusMessage,
   * the workspace's sessions as a delta (sessionMirror.ts).
   */
  status: 'checkpoint/status',
  /** Client -> server request, no params. Result: WorkspaceSessionsResult: the whole list a delta applies to. */
  workspaceSessions: 'checkpoint/workspaceSessions',
  /** Client -> server request. Params: SessionsQuery. Result: SessionsResult: every session, not only the workspace's. */
  sessions: 'checkpoint/sessions',
  /** Client -> server request. Params: ItemsQuery. Result: ItemsResult (or a bare list). */
  items: 'checkpoint/items',
  /** Client -> server request. Params: SearchQuery. Result: SearchResponse (protocol.py). */
  search: 'checkpoint/search',
  /** Client -> server request. Params: {item}. Result: TurnResult: the item's turns as they were said. */
  turn: 'checkpoint/turn',
  /** Client -> server request. Params: {session}. Result: TranscriptsResult: the session's transcript files. */
  transcripts: 'checkpoint/transcripts',
} as const;

/**
 * `workspace/executeCommand` ids the daemon handles. They differ from the VS Code command ids:
 * vscode-languageclient registers the daemon's ids as VS Code commands itself, and a second
 * registration under the same id would fail.
 */
export const ServerCommands = {
  /** Arguments: none, or [session_id]. Result: NowResult. */
  now: 'checkpoint.now',
  /** Arguments: [item_id]. Result: TriageResult. */
  dismiss: 'checkpoint.dismiss',
  /** Arguments: [item_id]. Result: TriageResult. */
  accept: 'checkpoint.accept',
  /** Arguments: [item_id]. The item is new again: the Undo of an Accept or a Dismiss. Result: TriageResult. */
  reopen: 'checkpoint.reopen',
  /** Arguments: [{old, new?, reason?, undo?}] or [old_id, new_id]. Result: SupersedeResult (protocol.py). */
  supersede: 'checkpoint.supersede',
  /** Arguments: [item_id] or [{id, undo?}]. Result: ShareResult (protocol.py). */
  share: 'checkpoint.share',
  /** Arguments: [session_id] or [{session, undo?}]. Everything stored for it removed, its transcripts read no more. Result: ForgetResult. */
  forget: 'checkpoint.forget',
} as const;

/** The agent of a repository's team session (the daemon's model.TEAM_AGENT): its decision records. */
export const TEAM_AGENT = 'team';

/** `source` of every diagnostic the daemon publishes. */
export const DIAGNOSTIC_SOURCE = 'checkpoint';

// -- kind labels -----------------------------------------------------------------------------------

/** One item of a kind: "Decision: ..." in tooltips, Markdown and ADRs. */
export const KIND_TITLE: Record<ItemKind, string> = { decision: 'Decision', constraint: 'Constraint', question: 'Open question' };

/** Items of a kind: the panel's groups and the export's sections. */
export const KIND_LABELS: Record<ItemKind, string> = {
  decision: 'Decisions',
  constraint: 'Constraints',
  question: 'Open questions',
};
