-- nvim_test.lua — a real client: headless Neovim (Debian's neovim, 0.7+) and its built-in LSP
-- client against `pylayer2static lsp`. Opens a PyLayer file, waits for the diagnostics, edits a
-- line so one disappears and reads the buffer and diagnostics back, applies a quick fix, asks
-- for hover and the static form; then, in a project with a src/ layout (P2S_PROJECT), a sibling
-- module's PyLayer: argument checks and the hover's binding. Run by tests/lsp/run_nvim.sh, which
-- sets P2S_BIN, P2S_FILE, P2S_PROJECT and P2S_RESULT; every check writes `lsp: ok|FAIL NAME` and the last line `lsp: N passed, N failed`.
local bin, file, result = os.getenv("P2S_BIN"), os.getenv("P2S_FILE"), os.getenv("P2S_RESULT")
local project = os.getenv("P2S_PROJECT")
local out = assert(io.open(result, "w"))
local passed, failed = 0, 0

local function check(cond, name, detail)
  if cond then
    passed = passed + 1
    out:write("lsp: ok   nvim: " .. name .. "\n")
  else
    failed = failed + 1
    out:write("lsp: FAIL nvim: " .. name .. (detail and (": " .. vim.inspect(detail)) or "") .. "\n")
  end
  out:flush()
end

local function diagnostic_of(buf, code)  -- buf's first diagnostic with that code
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then return d end
  end
end

local function finish()
  out:write(string.format("lsp: %d passed, %d failed\n", passed, failed))
  out:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = "pylayer2static",
    cmd = { bin, "lsp" },
    root_dir = vim.fn.fnamemodify(file, ":h"),
    flags = { debounce_text_changes = 10 },
  })
  check(id ~= nil, "client started")
  vim.lsp.buf_attach_client(buf, id)
  local client = vim.lsp.get_client_by_id(id)

  local function find(code) return diagnostic_of(buf, code) end
  local function line_of(pattern)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find(pattern, 1, true) then return i - 1, l end
    end
  end

  -- 1. the diagnostics of the file as written
  vim.wait(10000, function() return find("P2S103") ~= nil and find("P2S201") ~= nil end, 20)
  local hazard, static = find("P2S201"), find("P2S103")
  check(static ~= nil and static.severity == vim.diagnostic.severity.ERROR, "P2S103 is an error", static)
  check(hazard ~= nil and hazard.severity == vim.diagnostic.severity.WARN, "P2S201 is a warning", hazard)
  check(find("P2S300") ~= nil and find("P2S300").severity == vim.diagnostic.severity.INFO, "P2S300 is a note")
  local row, text = line_of("v = y.numpy()")
  local col = text:find("y.numpy()", 1, true) - 1
  -- the line holds "é😀" before the call: byte, UTF-16 and code point columns all differ
  check(hazard ~= nil and hazard.lnum == row and hazard.col == col, "P2S201 at the call (UTF-16 mapped to bytes)",
        hazard and { hazard.lnum, hazard.col, row, col })
  check(hazard ~= nil and hazard.message:find("help: ", 1, true) ~= nil, "the help text is shown")

  -- 2. an edit that removes the hazard; the diagnostic disappears and the buffer reads back
  vim.api.nvim_buf_set_text(buf, row, col, row, col + #"y.numpy()", { "y + 1" })
  vim.wait(10000, function() return find("P2S201") == nil end, 20)
  check(find("P2S201") == nil, "the hazard's diagnostic disappeared after the edit")
  local _, after = line_of("v = y + 1")
  check(after ~= nil and after:find("é😀", 1, true) ~= nil, "the edited line reads back", after)
  check(find("P2S103") ~= nil, "the other diagnostics stay")

  -- 3. the quick fix of P2S103
  static = find("P2S103")
  local function utf16(lnum, col)
    local l = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ""
    return { line = lnum, character = vim.str_utfindex(l, math.min(col, #l)) }
  end
  local range = { start = utf16(static.lnum, static.col), ["end"] = utf16(static.end_lnum, static.end_col) }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = range,
    context = { diagnostics = { { range = range, code = static.code, message = static.message, severity = 1 } } },
  }
  local resp = client.request_sync("textDocument/codeAction", params, 5000, buf)
  local fix
  for _, a in ipairs((resp and resp.result) or {}) do
    if a.title == "Add @staticmethod" then fix = a end
  end
  check(fix ~= nil, "a quick fix is offered", { resp, params })
  if fix then
    vim.lsp.util.apply_workspace_edit(fix.edit, "utf-16")
    vim.wait(10000, function() return find("P2S103") == nil end, 20)
    check(find("P2S103") == nil, "the quick fix removes the error")
    local frow = line_of("def forward(ctx, x, factor=2.0):")
    local above = vim.api.nvim_buf_get_lines(buf, frow - 1, frow, false)[1]
    check(above == "    @staticmethod", "the fix is in the buffer", above)
  end

  -- 4. hover and the static form
  local arow, aline = line_of("Tanh.apply")
  local hover = client.request_sync("textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = arow, character = aline:find("Tanh.apply", 1, true) + 5 },
  }, 5000, buf)
  local value = hover and hover.result and hover.result.contents.value or ""
  check(value:find("PyLayer `Tanh`", 1, true) ~= nil and value:find("Tensor slots", 1, true) ~= nil, "hover on Tanh.apply", value)
  local form = client.request_sync("workspace/executeCommand", {
    command = "pylayer2static.showStaticForm", arguments = { vim.uri_from_bufnr(buf) },
  }, 5000, buf)
  check(form and type(form.result) == "string" and form.result:find("_p2s.apply(Tanh, x", 1, true) ~= nil,
        "show static form", form)

  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 20)
  check(client.is_stopped(), "the server shuts down")

  -- 5. a PyLayer of a sibling module, in a src/ layout rooted at the project
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/src/pkg/use.py"))
  local use = vim.api.nvim_get_current_buf()
  local sid = vim.lsp.start_client({ name = "pylayer2static", cmd = { bin, "lsp" }, root_dir = project })
  vim.lsp.buf_attach_client(use, sid)
  local sibling = vim.lsp.get_client_by_id(sid)
  vim.wait(10000, function() return diagnostic_of(use, "P2S111") ~= nil end, 20)
  local args = diagnostic_of(use, "P2S111")
  check(args ~= nil and args.lnum == 5 and args.message:find("3 were given", 1, true) ~= nil,
        "P2S111 on a sibling module's PyLayer", args)
  local hline = vim.api.nvim_buf_get_lines(use, 6, 7, false)[1]
  local sh = sibling.request_sync("textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(use) },
    position = { line = 6, character = hline:find("Double.apply", 1, true) },
  }, 5000, use)
  local shown = sh and sh.result and sh.result.contents.value or ""
  check(shown:find("module `pkg.ops`", 1, true) ~= nil and shown:find("`k` ← `5`", 1, true) ~= nil
        and shown:find("src.pkg", 1, true) == nil, "hover binds a sibling module's call", shown)
  sibling.stop()
  vim.wait(5000, function() return sibling.is_stopped() end, 20)
end)
if not ok then check(false, "script error", err) end
finish()
