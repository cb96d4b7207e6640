/** Notifications of two lines at most (src/toast.ts): the gist, the action it implies, the rest in the log. */
import * as vscode from 'vscode';
import { beforeEach, describe, expect, it } from 'vitest';

import { TOAST_ACTIONS, TOAST_MAX, error, info, toastText } from '../src/toast';
import { resetVscodeMock } from './__mocks__/vscode';

beforeEach(() => resetVscodeMock());

describe('toastText', () => {
  it('keeps a message that fits as it is, on one line', () => {
    expect(toastText('Checkpoint: copied\n as   Markdown.')).toBe('Checkpoint: copied as Markdown.');
  });

  it('drops parenthesised asides first', () => {
    const long = `Checkpoint: the daemon (${'a very long command line '.repeat(3)}) is not running: it was not found.`;
    expect(toastText(long)).toBe('Checkpoint: the daemon is not running: it was not found.');
  });

  it('then keeps the first sentences that fit', () => {
    const text = `First sentence says the gist. ${'Then come the details, '.repeat(6)}which nobody reads in a toast.`;
    expect(toastText(text)).toBe('First sentence says the gist.');
  });

  it('else cuts at a word, with an ellipsis; never longer than two lines', () => {
    const text = `${'word '.repeat(40)}end`;
    const shown = toastText(text);
    expect(shown.length).toBeLessThanOrEqual(TOAST_MAX);
    expect(shown.endsWith('word…')).toBe(true);
  });

  it('does not split a sentence at a version number or a file’s extension', () => {
    const text = `Checkpoint needs Python 3.11 or 3.12 to read store.py and more. ${'x'.repeat(120)}`;
    expect(toastText(text)).toBe('Checkpoint needs Python 3.11 or 3.12 to read store.py and more.');
  });
});

describe('info, error', () => {
  it('show the short text with at most two actions', async () => {
    await info(`Checkpoint: ${'long '.repeat(40)}`, 'One', 'Two', 'Three');
    const [text, ...actions] = (vscode.window.showInformationMessage as unknown as { mock: { calls: string[][] } }).mock.calls[0];
    expect(text.length).toBeLessThanOrEqual(TOAST_MAX);
    expect(actions).toEqual(['One', 'Two']);
    expect(actions.length).toBe(TOAST_ACTIONS);
    await error('Checkpoint: short.', 'Show Log');
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith('Checkpoint: short.', 'Show Log');
  });
});

describe('shortPaths', () => {
  it('shortens a long absolute path to its last two parts, short ones and URLs left alone', () => {
    expect(toastText('Checkpoint: the daemon is not running: "/tmp/checkpoint-e2e-t4pdWO/no-such-dir/checkpoint" was not found.')).toBe(
      'Checkpoint: the daemon is not running: "…/no-such-dir/checkpoint" was not found.',
    );
    expect(toastText('Wrote /w/a.md.')).toBe('Wrote /w/a.md.');
    expect(toastText('See https://example.com/a/very/long/path/that/goes/on/and/on for more.')).toBe(
      'See https://example.com/a/very/long/path/that/goes/on/and/on for more.',
    );
    expect(toastText('Exported to /home/dev/projects/checkpoint/out/exports.')).toBe('Exported to …/out/exports.');
  });

  it('keeps the first clauses of one long sentence', () => {
    expect(
      toastText('Checkpoint: Extracted 9 chunks with the heuristic extractor: 9 captured, 0 failed; 12 new items (4 decisions); more and more words here.'),
    ).toBe('Checkpoint: Extracted 9 chunks with the heuristic extractor: 9 captured, 0 failed; 12 new items.');
  });
});
