-- Neovim's own LSP client driving `checkpoint serve`: open a workspace file, start the daemon,
-- collect checkpoint/status notifications, run checkpoint.now, wait for the decision diagnostics,
-- hover one, and write everything to a JSON file for tests/server/test_server_neovim.py.
--
--   nvim --headless -u NONE -l checkpoint_client.lua OUT.json WORKSPACE FILE SERVER_ARGV_JSON
local out_path, root, file, argv = arg[1], arg[2], arg[3], vim.json.decode(arg[4])
local result = { statuses = {}, now = vim.NIL, now_error = vim.NIL, diagnostics = {}, hover = vim.NIL,
                 float = {}, said_float = {}, errors = {}, version = tostring(vim.version()) }

local function request(client, method, params, bufnr)
  local done, answer, failure = false, nil, nil
  local function handler(err, res)
    done, answer, failure = true, res, err
  end
  if vim.fn.has("nvim-0.11") == 1 then
    client:request(method, params, handler, bufnr)
  else
    client.request(method, params, handler, bufnr)
  end
  if not vim.wait(30000, function() return done end, 20) then
    table.insert(result.errors, method .. " timed out")
  end
  return answer, failure
end

vim.cmd.edit(file)
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "checkpoint",
  cmd = argv,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
  init_options = { checkpoint = { extraction = "manual" } },
  handlers = {
    ["checkpoint/status"] = function(_, params) table.insert(result.statuses, params) end,
  },
}, { bufnr = bufnr })
local client = vim.lsp.get_client_by_id(client_id)

local function save()
  vim.fn.writefile({ vim.json.encode(result) }, out_path)
end

if not client then
  table.insert(result.errors, "the client did not start")
  save()
  return
end

if not vim.wait(30000, function()
  local last = result.statuses[#result.statuses]
  return last ~= nil and last.totals.turns > 0
end, 20) then
  table.insert(result.errors, "no status with turns")
end

local now, err = request(client, "workspace/executeCommand", { command = "checkpoint.now", arguments = {} }, bufnr)
result.now = now or vim.NIL
result.now_error = err and err.message or vim.NIL

local wanted = tonumber(os.getenv("CHECKPOINT_NVIM_DIAGNOSTICS") or "1")
if not vim.wait(30000, function() return #vim.diagnostic.get(bufnr) >= wanted end, 20) then
  table.insert(result.errors, "no diagnostics")
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(result.diagnostics, { lnum = d.lnum, end_lnum = d.end_lnum, col = d.col, end_col = d.end_col,
                                     severity = d.severity, message = d.message, source = d.source,
                                     code = d.code })
end
if #result.diagnostics > 0 then
  local first = result.diagnostics[1]
  local hover = request(client, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = first.lnum, character = 0 },
  }, bufnr)
  result.hover = hover and hover.contents.value or vim.NIL
  -- The diagnostic float of that line, as `vim.diagnostic.open_float` shows it: every item on it.
  vim.api.nvim_win_set_cursor(0, { first.lnum + 1, 0 })
  local float_buf, float_win = vim.diagnostic.open_float({ scope = "line", source = true })
  if float_buf then
    result.float = vim.api.nvim_buf_get_lines(float_buf, 0, -1, false)
    vim.api.nvim_win_close(float_win, true)
  end
  -- The same float with the format function docs/install.md gives: each item says who said it and when.
  local said_buf = vim.diagnostic.open_float({ scope = "line", format = function(d)
    local data = d.user_data and d.user_data.lsp and d.user_data.lsp.data
    return data and data.said and (d.message .. "\n  " .. data.said) or d.message
  end })
  if said_buf then
    result.said_float = vim.api.nvim_buf_get_lines(said_buf, 0, -1, false)
  end
end

if vim.fn.has("nvim-0.11") == 1 then client:stop() else client.stop() end
if not vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20) then
  table.insert(result.errors, "the server did not stop")
end
save()
