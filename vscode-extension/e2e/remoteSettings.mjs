// The user's settings in the code-server profile, written as a user would: through the settings editor
// (Remote Settings JSON), so that VS Code reports the change to the extension.

/** Replace the remote settings with `values` and save; the settings editor is left open. */
export async function writeRemoteSettings(page, runFromPalette, values) {
  await runFromPalette(page, 'Preferences: Open Remote Settings (JSON)');
  const editor = page.locator('.monaco-editor[data-uri$="Machine/settings.json"] .view-lines').first();
  await editor.waitFor({ timeout: 15_000 });
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(JSON.stringify(values));
  await page.keyboard.press('Control+S');
}
