"""`checkpoint serve` as a real process over a real LSP client (pytest-lsp, Neovim)."""
