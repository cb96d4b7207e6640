/**
 * The slice of the `vscode` API the extension's own modules use, for unit tests. Functions are
 * vitest mocks so tests can script answers (`vi.mocked(window.showQuickPick).mockResolvedValue`)
 * and assert calls; `resetVscodeMock()` puts everything back between tests.
 */
import { vi } from 'vitest';

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (listener: (e: T) => void): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class ThemeIcon {
  constructor(readonly id: string, readonly color?: ThemeColor) {}
}

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

/** createQuickPick's answer: tests set `value`/`selectedItems` and fire its events. */
export class FakeQuickPick<T> {
  title?: string;
  placeholder?: string;
  value = '';
  items: readonly T[] = [];
  selectedItems: readonly T[] = [];
  busy = false;
  matchOnDescription = false;
  matchOnDetail = false;
  readonly changeValue = new EventEmitter<string>();
  readonly accept = new EventEmitter<void>();
  readonly hidden = new EventEmitter<void>();
  readonly onDidChangeValue = this.changeValue.event;
  readonly onDidAccept = this.accept.event;
  readonly onDidHide = this.hidden.event;
  readonly show = vi.fn();
  readonly hide = vi.fn(() => this.hidden.fire());
  readonly dispose = vi.fn();
  /** What typing does: the value changes, then the event. */
  type(value: string): void {
    this.value = value;
    this.changeValue.fire(value);
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  contextValue?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(sl: number, sc: number, el: number, ec: number) {
    this.start = new Position(sl, sc);
    this.end = new Position(el, ec);
  }
}

export class Selection extends Range {}

export class Uri {
  private constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static parse(s: string): Uri {
    return s.startsWith('file://') ? new Uri('file', decodeURIComponent(s.slice(7))) : new Uri('other', s);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.fsPath, ...parts].join('/'));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export interface FakeStatusBarItem {
  id: string;
  alignment: StatusBarAlignment;
  priority: number;
  name?: string;
  text: string;
  tooltip?: string;
  command?: string;
  backgroundColor?: ThemeColor;
  show: ReturnType<typeof vi.fn>;
  dispose: ReturnType<typeof vi.fn>;
}

function makeWindow() {
  return {
    createStatusBarItem: vi.fn(
      (id: string, alignment: StatusBarAlignment, priority: number): FakeStatusBarItem => ({
        id,
        alignment,
        priority,
        text: '',
        show: vi.fn(),
        dispose: vi.fn(),
      }),
    ),
    showInformationMessage: vi.fn(async (..._args: unknown[]): Promise<string | undefined> => undefined),
    showWarningMessage: vi.fn(async (..._args: unknown[]): Promise<string | undefined> => undefined),
    showErrorMessage: vi.fn(async (..._args: unknown[]): Promise<string | undefined> => undefined),
    showQuickPick: vi.fn(async (..._args: unknown[]): Promise<unknown> => undefined),
    createQuickPick: vi.fn(<T>() => new FakeQuickPick<T>()),
    showOpenDialog: vi.fn(async (..._args: unknown[]): Promise<Uri[] | undefined> => undefined),
    showInputBox: vi.fn(async (..._args: unknown[]): Promise<string | undefined> => undefined),
    showTextDocument: vi.fn(async (..._args: unknown[]): Promise<unknown> => ({})),
    createOutputChannel: vi.fn(),
  };
}

export const window = makeWindow();

/** An in-memory file system for workspace.fs. */
export const files = new Map<string, Uint8Array>();

function makeWorkspace() {
  return {
    workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
    getConfiguration: vi.fn(),
    fs: {
      stat: vi.fn(async (uri: Uri) => {
        if (!files.has(uri.fsPath)) {
          throw new Error(`ENOENT ${uri.fsPath}`);
        }
        return { type: 1, size: files.get(uri.fsPath)?.length ?? 0 };
      }),
      writeFile: vi.fn(async (uri: Uri, data: Uint8Array) => {
        files.set(uri.fsPath, data);
      }),
    },
  };
}

export const workspace = makeWorkspace();

export const env = { clipboard: { writeText: vi.fn(async (_text: string) => undefined) } };

export const commands = {
  registerCommand: vi.fn((id: string, fn: (...args: unknown[]) => unknown) => ({ id, fn, dispose: vi.fn() })),
  executeCommand: vi.fn(async (..._args: unknown[]) => undefined),
};

export const languages = { getDiagnostics: vi.fn((_uri: Uri): unknown[] => []) };

export function resetVscodeMock(): void {
  Object.assign(window, makeWindow());
  const fresh = makeWorkspace();
  workspace.workspaceFolders = undefined;
  workspace.getConfiguration = fresh.getConfiguration;
  workspace.fs = fresh.fs;
  files.clear();
  env.clipboard.writeText = vi.fn(async (_text: string) => undefined);
  commands.registerCommand.mockClear();
  commands.executeCommand = vi.fn(async (..._args: unknown[]) => undefined);
  languages.getDiagnostics = vi.fn((_uri: Uri): unknown[] => []);
}
