/* Live code for the Recitation 11 book.
 *
 * The theme's "Live Code" button calls initThebe(). This script then loads the
 * Thebe that the site serves itself (_static/thebe, pinned in package-lock.json),
 * turns the page's code cells into editable cells and starts a kernel from the
 * source chosen in _config.yml (rec11_live_code): a BinderHub, or a Jupyter
 * server / JupyterHub. The build writes that choice into each page as JSON
 * (<script id="rec11-live-code-config">), see src/rec11/book/livecode.py.
 *
 * Every cell can be run on its own: running a cell first runs, in order, the
 * cells above it that have not run yet, so a reader never meets a NameError for a
 * variable an earlier cell defines. Set-up cells (tag thebe-init) run as soon as
 * the kernel is up.
 *
 * A reader's edits are kept in the browser (localStorage, per page and per version
 * of the page's code) and come back when Live Code starts again; "reset" buttons
 * return a cell, or the page, to the book's code.
 *
 * On a JupyterHub (hub: true) the reader pastes an API token; the hub's API finds or
 * starts the reader's server, with its progress shown. Every way this can go wrong
 * ends in a message under the page title that says what to do, with a button when
 * there is something to press: a token the hub refuses, a server that does not
 * start, a kernel connection the server refuses (checked within seconds), a server
 * stopped mid-session (the hub's idle culler): "Start it again" starts it and a new
 * kernel, without reloading the page.
 */
(function () {
  "use strict";

  var CONFIG_ID = "rec11-live-code-config";
  var TOKEN_KEY = "rec11-live-code-token:";
  var EDITS_KEY = "rec11-live-code-edits:";
  var CONNECT_TIMEOUT = 15000;   // ms for a new kernel's websocket before the page says so
  var REPROBE_DELAY = 1500;      // ms before a refused probe is tried once more
  var LOST_GRACE = 3000;         // ms a dropped connection may take to come back on its own
  var SPAWN_TIMEOUT = 300000;    // ms for the hub to start a reader's server
  var state = {
    state: "idle",          // idle | loading | starting | ready | failed | stopped | lost
    problem: null,          // what went wrong: token | no-token | hub | spawn | websocket | kernel | stopped | lost
    timings: {},            // performance.now() at click, editor (cells editable), kernel (connected),
                            // ready (set-up done), and "became <state>" at each change of state
    error: null,
    started: null,          // the promise initThebe() returns
    restoredEdits: 0,
  };
  window.rec11LiveCode = state;

  function readConfig() {
    var el = document.getElementById(CONFIG_ID);
    return el ? JSON.parse(el.textContent) : null;
  }

  function setState(name, problem) {
    state.state = name;
    state.problem = problem || null;
    state.timings["became " + name] = performance.now();
    document.documentElement.setAttribute("data-rec11-live-code", name);
  }

  function Problem(kind, message) {  // an error the reader is told about in words, with a way on
    var err = new Error(message);
    err.kind = kind;
    return err;
  }

  // --- the status line under the page title, and its buttons ----------------------------

  // On a page with trained models: the reader's kernel trains (or loads) its own.
  var OTHER_WEIGHTS = "Your kernel trains its own copy of this page's models, or loads one trained " +
    "on another machine; training rounds differently on another CPU, so your numbers can differ " +
    "slightly from the page's. What the page says about them holds for any such training.";

  function statusBox() {
    var box = document.querySelector(".rec11-live");
    if (box) return box;
    box = document.createElement("div");
    // The theme inserts an empty <button class="thebe-launch-button"> after the title
    // before calling initThebe(), and skips that when the class is already there; the
    // status box is not a button, so it takes the button's place and its class.
    box.className = "rec11-live thebe-launch-button";
    var line = document.createElement("p");
    line.className = "rec11-live-status";
    line.setAttribute("role", "status");
    line.setAttribute("aria-live", "polite");
    var actions = document.createElement("div");
    actions.className = "rec11-live-actions";
    box.append(line, actions);
    var placeholder = document.querySelector("button.thebe-launch-button");
    var title = document.querySelector("section h1") || document.querySelector("article h1");
    if (placeholder) placeholder.replaceWith(box);
    else if (title) title.insertAdjacentElement("afterend", box);
    else (document.querySelector("article") || document.body).prepend(box);
    return box;
  }

  function button(label, onClick, className) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "rec11-live-button " + (className || "");
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }

  // say(text[, actions]): actions are [label, function] pairs shown as buttons.
  function say(text, actions) {
    var box = statusBox();
    box.querySelector(".rec11-live-status").textContent = text;
    var row = box.querySelector(".rec11-live-actions");
    row.querySelectorAll(".rec11-live-action").forEach(function (b) { b.remove(); });
    (actions || []).forEach(function (pair) {
      row.prepend(button(pair[0], pair[1], "rec11-live-action"));
    });
  }

  // --- loading the pinned Thebe ---------------------------------------------------------

  function loadCss(href) {
    return new Promise(function (resolve, reject) {
      var link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = href;
      link.onload = resolve;
      link.onerror = function () { reject(new Error("could not load " + href)); };
      document.head.appendChild(link);
    });
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(script);
    });
  }

  function loadThebe(config) {
    if (window.thebe && window.thebe.bootstrap) return Promise.resolve();
    return Promise.all([loadCss(config.thebeCss), loadScript(config.thebeJs)]);
  }

  // --- where the kernel comes from ---------------------------------------------------------

  function host(url) { return new URL(url).host; }

  function askToken(server) {
    var key = TOKEN_KEY + server.url;
    var token = window.sessionStorage.getItem(key);
    if (!token) {
      token = (window.prompt(server.hub
        ? "Live code runs on the JupyterHub at " + host(server.url) + ". Paste an API token " +
          "from its Token page (" + server.url + "hub/token):"
        : "Live code runs on the Jupyter server at " + host(server.url) + ". Paste its token:") || "").trim();
      if (!token) {
        throw Problem("no-token", "no token was pasted. Live code needs one to run your code on " +
                      host(server.url) + (server.hub ? " (make one on its Token page, " + server.url + "hub/token)" : ""));
      }
      window.sessionStorage.setItem(key, token);
    }
    return token;
  }

  function forgetToken(url) {
    window.sessionStorage.removeItem(TOKEN_KEY + url);
  }

  function pause(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  async function hubFetch(url, token, method) {
    var response;
    try {
      response = await fetch(url, { method: method || "GET", headers: { Authorization: "token " + token } });
    } catch (err) {
      throw Problem("hub", "the hub did not answer (" + err.message + "). Check your connection; if it " +
                    "persists, the hub may be down or may not accept requests from this site (CORS)");
    }
    if (response.status === 401 || response.status === 403) {
      throw Problem("token", "the hub did not accept your token: it may be mistyped, expired or revoked. " +
                    "Make a new one on the hub's Token page and paste it");
    }
    return response;
  }

  async function hubJson(url, token) {
    var response = await hubFetch(url, token);
    if (!response.ok) throw Problem("hub", "the hub answered " + response.status + " to " + url);
    return response.json();
  }

  function defaultServer(user) {
    var servers = user.servers || {};
    return servers[""] || null;
  }

  // The hub's progress events while a server starts (an event stream; fetch can send the
  // token). Until the hub has registered the start it answers 400: ask again.
  function followProgress(api, name, token, show) {
    var controller = new AbortController();
    (async function () {
      while (!controller.signal.aborted) {
        var response = await fetch(api + "users/" + encodeURIComponent(name) + "/server/progress",
                                   { headers: { Authorization: "token " + token }, signal: controller.signal });
        if (!response.ok || !response.body) { await pause(1000); continue; }
        var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
        for (;;) {
          var chunk = await reader.read();
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, { stream: true });
          var lines = buffer.split("\n");
          buffer = lines.pop();
          lines.forEach(function (line) {
            if (line.indexOf("data:") !== 0) return;
            try { show(JSON.parse(line.slice(5)).message || ""); } catch (e) { /* not JSON: ignore */ }
          });
        }
      }
    })().catch(function () {});
    return controller;
  }

  // A JupyterHub: find the reader's own server through the hub API, starting it if needed.
  // The hub answers a start request only when the server is up or after its
  // slow_spawn_timeout (10 s by default), so the request runs while the page counts the
  // seconds and shows the hub's progress.
  async function hubServerUrl(hub, token) {
    var api = hub + "hub/api/";
    var user = await hubJson(api + "user", token);
    var server = defaultServer(user);
    if (server && server.ready) return new URL(server.url, hub).href;
    var started = performance.now(), latest = "", posted = true, postError = null;
    if (!server || !server.pending || server.pending === "stop") {
      posted = false;
      hubFetch(api + "users/" + encodeURIComponent(user.name) + "/server", token, "POST").then(async function (response) {
        if (!response.ok && response.status !== 400) {  // 400: already running or pending
          var detail = "";
          try { detail = (await response.json()).message || ""; } catch (e) { /* no JSON */ }
          postError = Problem("spawn", "the hub could not start your server (" + response.status +
                              (detail ? ": " + detail : "") + ")");
        }
        posted = true;
      }, function (err) { postError = err; });
    }
    var progress = followProgress(api, user.name, token, function (message) { latest = message; });
    try {
      for (;;) {
        var seconds = Math.round((performance.now() - started) / 1000);
        say("Live code: starting your server on " + host(hub) + " … " + seconds + " s" +
            (latest ? " (" + latest + ")" : "") +
            ". A first start can take a minute or two when the whole class starts at once.");
        if (postError) throw postError;
        user = await hubJson(api + "user", token);
        server = defaultServer(user);
        if (server && server.ready) return new URL(server.url, hub).href;
        if (posted && (!server || (!server.pending && !server.ready))) {
          throw Problem("spawn", "your server on the hub stopped while it was starting" +
                        (latest ? " (" + latest + ")" : ""));
        }
        if (performance.now() - started > SPAWN_TIMEOUT) {
          throw Problem("spawn", "your server on the hub did not start within " + SPAWN_TIMEOUT / 60000 + " minutes");
        }
        await pause(1000);
      }
    } finally {
      progress.abort();
    }
  }

  async function kernelSource(config) {
    if (config.source === "binder") {
      return {
        useBinder: true,
        binderOptions: config.binder,
        savedSessionOptions: { enabled: true },
      };
    }
    var server = config.server;
    var token = server.token || askToken(server);
    var baseUrl;
    try {
      baseUrl = server.hub ? await hubServerUrl(server.url, token) : server.url;
    } catch (err) {
      if (err.kind === "token") forgetToken(server.url);
      throw err;
    }
    live.token = token;
    live.baseUrl = baseUrl;
    return {
      useBinder: false,
      serverSettings: {
        baseUrl: baseUrl,
        wsUrl: baseUrl.replace(/^http/, "ws"),
        token: token,
        appendToken: true,
      },
    };
  }

  // --- the page's cells -------------------------------------------------------------------

  // myst-nb writes each code cell as <div class="cell tag_...">, with a .cell_input and,
  // when it printed or drew something, a .cell_output. Thebe pairs the n-th input with
  // the n-th output on the page, so every cell gets an output placeholder.
  function markCells() {
    var cells = [];
    document.querySelectorAll("article div.cell, main div.cell").forEach(function (cell) {
      var input = cell.querySelector(".cell_input");
      if (!input || cells.some(function (c) { return c.element === cell; })) return;
      var output = cell.querySelector(".cell_output");
      if (!output) {
        output = document.createElement("div");
        output.className = "cell_output docutils container";
        input.insertAdjacentElement("afterend", output);
      }
      // Thebe reads the cell's code from the text of the input; the copy button's
      // tooltip ("Copy to clipboard") is text too, and would become code.
      input.querySelectorAll("button.copybtn").forEach(function (b) { b.remove(); });
      input.setAttribute("data-executable", "true");
      input.setAttribute("data-language", "python");
      output.setAttribute("data-output", "true");
      var alts = Array.prototype.map.call(output.querySelectorAll("img[alt]"), function (img) { return img.alt; });
      cells.push({
        element: cell,
        output: output,
        alts: alts,
        init: cell.classList.contains("tag_thebe-init"),
        raises: cell.classList.contains("tag_raises-exception"),
      });
    });
    return cells;
  }

  // After a run, an image the kernel drew has no alt text; give it the figure's.
  function keepAltText(info) {
    info.output.querySelectorAll("img").forEach(function (img, k) {
      if (!img.getAttribute("alt")) {
        img.setAttribute("alt", info.alts[k] || info.alts[0] || "Figure drawn by this cell's code");
      }
    });
  }

  function labelEditors(cells) {
    cells.forEach(function (info, n) {
      var area = info.element.querySelector(".CodeMirror textarea");
      if (area) {
        area.setAttribute("aria-label", "Code of cell " + (n + 1) + " (editable: Shift+Enter runs it, Escape leaves the editor)");
      }
      info.element.querySelectorAll(".thebe-controls button").forEach(function (b) {
        b.setAttribute("type", "button");
      });
    });
  }

  // --- a reader's edits, kept in the browser ----------------------------------------------

  function hash(text) {  // FNV-1a, 32 bits: names a version of the page's code
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return ("0000000" + h.toString(16)).slice(-8);
  }

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }

  // Edits are kept per page and per version of the page's code (a hash of the code the
  // build wrote): a new build that changes the page's code starts from the book's code,
  // and stale edits are not brought back over it.
  function installEdits(notebook, cells) {
    var originals = notebook.cells.map(function (cell) { return cell.source; });
    var key = EDITS_KEY + location.pathname + ":" + hash(originals.join("\u0000"));
    var store = storage();
    var edits = {};
    try { edits = JSON.parse((store && store.getItem(key)) || "{}") || {}; } catch (e) { edits = {}; }
    // older versions of this page's edits are stale: drop them
    if (store) {
      for (var k = store.length - 1; k >= 0; k--) {
        var name = store.key(k);
        if (name && name.indexOf(EDITS_KEY + location.pathname + ":") === 0 && name !== key) store.removeItem(name);
      }
    }
    var editors = cells.map(function (info) {
      var el = info.element.querySelector(".CodeMirror");
      return el && el.CodeMirror;
    });
    var pageReset = button("Reset the page's code", resetAll, "rec11-reset-page");
    pageReset.hidden = true;
    statusBox().querySelector(".rec11-live-actions").append(pageReset);

    function save() {
      var count = Object.keys(edits).length;
      if (store) {
        try {
          if (count) store.setItem(key, JSON.stringify(edits));
          else store.removeItem(key);
        } catch (e) { /* full or forbidden: edits stay for this visit only */ }
      }
      pageReset.hidden = count === 0;
      pageReset.textContent = "Reset the page's code (" + count + " edited cell" + (count === 1 ? "" : "s") + ")";
      cells.forEach(function (info, i) {
        if (info.reset) info.reset.hidden = !(String(i) in edits);
      });
    }

    function reset(i) {
      if (editors[i]) editors[i].setValue(originals[i]);
      delete edits[i];
      save();
    }

    function resetAll() {
      Object.keys(edits).forEach(function (i) { if (editors[i]) editors[i].setValue(originals[i]); });
      edits = {};
      save();
      var focus = cells[0] && cells[0].element.querySelector(".CodeMirror textarea");
      if (state.state === "ready") say(readyText() + " Every cell shows the book's code again.");
      if (focus) focus.focus({ preventScroll: true });
    }

    var restored = 0;
    cells.forEach(function (info, i) {
      var cm = editors[i];
      if (!cm) return;
      if (typeof edits[i] === "string" && edits[i] !== originals[i]) {
        cm.setValue(edits[i]);
        restored++;
      } else {
        delete edits[i];
      }
      var controls = info.element.querySelector(".thebe-controls");
      if (controls) {
        info.reset = button("reset", function () { reset(i); }, "thebe-button rec11-reset-cell");
        info.reset.title = "Put back the book's code for this cell";
        controls.insertBefore(info.reset, controls.querySelector(".thebe-busy"));
      }
      cm.on("change", function () {
        var code = cm.getValue();
        if (code === originals[i]) delete edits[i];
        else edits[i] = code;
        save();
      });
    });
    save();
    return restored;
  }

  // --- running cells in order --------------------------------------------------------------

  function failed(result) {
    return result == null || (result.error && result.error.length > 0);
  }

  function firstLine(source) {
    var line = (source || "").split("\n").find(function (l) { return l.trim(); }) || "";
    return line.length > 60 ? line.slice(0, 57) + "…" : line;
  }

  function note(cell, text) {
    cell.area.model.clear();
    cell.area.model.add({ output_type: "stream", name: "stderr", text: text + "\n" });
  }

  function installRunOrder(notebook, cells) {
    var ran = new Set();
    var plain = notebook.cells.map(function (cell) { return cell.execute.bind(cell); });
    var busy = window.thebe.setButtonsBusy || function () {};
    var idle = window.thebe.clearButtonsBusy || function () {};
    var queue = Promise.resolve();
    var generation = 0;   // a new kernel starts a new generation; older queued runs are dropped

    async function runOne(i, source) {
      var cell = notebook.cells[i];
      busy(cell.id);
      try {
        var result = await plain[i](source === undefined ? cell.source : source);
      } finally {
        idle(cell.id);
      }
      keepAltText(cells[i]);
      if (!failed(result) || cells[i].raises) ran.add(i);
      return { result: result, ok: !failed(result) || cells[i].raises };
    }

    async function runWithEarlier(i, source) {
      var todo = [];
      for (var j = 0; j < i; j++) if (!ran.has(j)) todo.push(j);
      if (todo.length) say("Live code: running " + todo.length + " earlier cell" + (todo.length > 1 ? "s" : "") +
                           " first, so that this one has what it needs …");
      for (var k = 0; k < todo.length; k++) {
        var earlier = await runOne(todo[k]);
        if (!earlier.ok) {
          note(notebook.cells[i], "Not run: an earlier cell raised an error (the one starting \"" +
               firstLine(notebook.cells[todo[k]].source) + "\"). Fix it, then run this cell again.");
          say(readyText());
          return earlier.result;
        }
      }
      var mine = await runOne(i, source);
      if (todo.length && state.state === "ready") say(readyText());
      return mine.result;
    }

    function enqueue(work) {
      var mine = generation;
      var job = queue.then(function () { return mine === generation ? work() : null; });
      queue = job.catch(function () {});
      return job;
    }

    notebook.cells.forEach(function (cell, i) {
      cell.execute = function (source) {
        if (state.state !== "ready" && state.state !== "starting") {
          note(cell, "Not run: live code is not connected to a kernel. See the message under the page title.");
          return Promise.resolve(null);
        }
        return enqueue(function () { return runWithEarlier(i, source); });
      };
    });

    return {
      runInit: function () {
        return enqueue(async function () {
          for (var i = 0; i < cells.length; i++) if (cells[i].init) await runOne(i);
        });
      },
      // a new kernel: nothing has run in it, and runs queued for the old one are dropped
      reset: function () {
        generation++;
        ran.clear();
        queue = Promise.resolve();
        notebook.cells.forEach(function (cell) { idle(cell.id); });
      },
      forget: function () { ran.clear(); },
    };
  }

  // --- the kernel's connection -------------------------------------------------------------

  // A browser cannot tell why a websocket was refused (a 403 looks like any other
  // failure), so a new kernel's connection is checked at once with a probe of our own:
  // a refused one is reported within a second, not after minutes of silent retries.
  function probeWebsocket(kernel) {
    var s = kernel.serverSettings;
    var url = s.wsUrl.replace(/\/?$/, "/") + "api/kernels/" + encodeURIComponent(kernel.id) +
              "/channels?session_id=rec11-probe-" + Math.random().toString(36).slice(2);
    if (s.appendToken && s.token) url += "&token=" + encodeURIComponent(s.token);
    return new Promise(function (resolve) {
      var ws, done = false;
      function finish(ok) {
        if (done) return;
        done = true;
        try { ws.close(); } catch (e) { /* already closed */ }
        resolve(ok);
      }
      try { ws = new WebSocket(url); } catch (e) { resolve(false); return; }
      ws.onopen = function () { finish(true); };
      ws.onerror = function () { finish(false); };
      ws.onclose = function () { finish(false); };
      setTimeout(function () { finish(null); }, CONNECT_TIMEOUT);
    });
  }

  function waitConnected(kernel, ms) {
    return new Promise(function (resolve) {
      if (kernel.connectionStatus === "connected") { resolve(true); return; }
      var timer = setTimeout(function () { kernel.connectionStatusChanged.disconnect(on); resolve(false); }, ms);
      function on(_, status) {
        if (status !== "connected") return;
        clearTimeout(timer);
        kernel.connectionStatusChanged.disconnect(on);
        resolve(true);
      }
      kernel.connectionStatusChanged.connect(on);
    });
  }

  function refusedMessage() {
    var base = "the server refused the connection to your kernel (its WebSocket), so no cell can run";
    if (config.server && config.server.hub) {
      return base + ". This hub does not accept API tokens on kernel connections. Tell your instructor: " +
             "the hub's admins must set JUPYTERHUB_ALLOW_TOKEN_IN_URL=1 for user servers (see the book's hub guide)";
    }
    return base + ". The server must allow this site's origin (allow_origin) and accept the token";
  }

  async function checkConnection(session) {
    var kernel = session.kernel;
    var probe = probeWebsocket(kernel);
    var connected = waitConnected(kernel, CONNECT_TIMEOUT);
    var first = await Promise.race([connected.then(function (ok) { return ok ? "connected" : "timeout"; }),
                                    probe.then(function (ok) { return ok === false ? "refused" : null; })]);
    if (first === null) first = (await connected) ? "connected" : "timeout";
    if (first === "refused") {
      // A probe can fail for a moment while a busy server is still setting the kernel up;
      // a refusal (a 403) is one that a second probe, a moment later, meets again.
      await pause(REPROBE_DELAY);
      var again = kernel.connectionStatus === "connected" ? true : await probeWebsocket(kernel);
      if (again === true) first = "connected";
      else if (again === null) first = (await connected) ? "connected" : "timeout";
    }
    if (first === "connected") return;
    session.shutdown().catch(function () {});  // no use to anyone: do not leave it running
    if (first === "refused") throw Problem("websocket", refusedMessage());
    throw Problem("websocket", "the connection to your kernel did not open within " + CONNECT_TIMEOUT / 1000 +
                  " s. Check your connection and try again");
  }

  // --- start -----------------------------------------------------------------------------

  var config = null;
  var live = { notebook: null, cells: null, order: null, session: null, token: null, baseUrl: null, watch: 0 };

  function where() {
    if (!config) return "";
    if (config.source === "binder") {
      return config.label + " (" + config.binder.repo + ", " + config.binder.ref + ")";
    }
    return config.label;
  }

  function readyText() {
    return "Live code is ready: a " + config.kernel.kernelName + " kernel on " + config.label +
           ". Edit any cell and run it with its run button or Shift+Enter; cells above it run first if needed." +
           " Your edits are kept in this browser." + (config.trainedModels ? " " + OTHER_WEIGHTS : "");
  }

  function onThebeStatus(_, data) {
    if (state.state !== "starting" || !data || !data.message) return;
    if (data.subject === "server") {
      var message = data.message.length > 120 ? data.message.slice(0, 117) + "…" : data.message;
      say("Live code: starting a kernel on " + where() + ". " + message);
    }
  }

  // After a kernel is up: notice when its connection drops, and say why.
  function watchKernel(session) {
    var kernel = session.kernel;
    var mine = ++live.watch;
    kernel.statusChanged.connect(function (_, status) {
      if (mine !== live.watch) return;
      if (status === "restarting" || status === "autorestarting") live.order.forget();
      if (status === "autorestarting" && state.state === "ready") {
        say("Live code: your kernel stopped and was restarted (it may have run out of memory), so what the " +
            "cells had computed is gone; cells above the one you run will run again first.");
      }
      if (status === "dead") {
        setState("lost", "kernel");
        say("Live code: your kernel stopped (it may have run out of memory). Start a new one to go on; " +
            "cells above the one you run will run again first.", [["Start a new kernel", reconnect]]);
      }
    });
    kernel.connectionStatusChanged.connect(function (_, status) {
      if (mine !== live.watch) return;
      if (status === "connected" && state.state === "lost" && state.problem === "lost") {
        setState("ready");
        say(readyText());
      } else if (status === "connecting" && state.state === "ready") {
        setTimeout(function () {
          if (mine === live.watch && kernel.connectionStatus !== "connected" && state.state === "ready") diagnose();
        }, LOST_GRACE);
      } else if (status === "disconnected" && (state.state === "ready" || state.problem === "lost")) {
        diagnose(true);
      }
    });
  }

  async function diagnose(gaveUp) {
    var mine = live.watch;
    if (config.server && config.server.hub && live.token) {
      try {
        var user = await hubJson(config.server.url + "hub/api/user", live.token);
        var server = defaultServer(user);
        if (mine !== live.watch) return;
        if (!server || !server.ready) {
          setState("stopped", "stopped");
          say("Live code: your server on " + host(config.server.url) + " has stopped (the hub stops servers " +
              "that sit idle, or it was restarted), so cells cannot run. Start it again to go on: your edits " +
              "are kept, and cells above the one you run will run again first.", [["Start it again", reconnect]]);
          return;
        }
      } catch (err) {
        if (mine !== live.watch) return;
        if (err.kind === "token") {
          setState("failed", "token");
          say("Live code: " + err.message + ".", [["Paste a new token", function () {
            forgetToken(config.server.url);
            reconnect();
          }]]);
          return;
        }
      }
    }
    setState("lost", "lost");
    say("Live code: the connection to your kernel on " + where() + " was lost" +
        (gaveUp ? "." : "; trying to reconnect …") + " Check your network connection.",
        [["Reconnect (new kernel)", reconnect]]);
  }

  // A new kernel for the page's cells: the first, or after a stop. On a hub, the
  // reader's server is found (or started) first.
  async function newKernel() {
    var server = window.thebe.server;
    setState("starting");
    say("Live code: starting a kernel on " + where() + " …");
    await server.ready;
    var session = await server.startNewSession(live.notebook.rendermime, config.kernel);
    await checkConnection(session);
    state.timings.kernel = performance.now();
    if (live.session) live.session.dispose();
    live.session = session;
    window.thebe.session = session;
    live.order.reset();
    live.notebook.attachSession(session);
    watchKernel(session);
    if (live.cells.some(function (c) { return c.init; })) say("Live code: running the page's set-up cells …");
    await live.order.runInit();
    state.timings.ready = performance.now();
    setState("ready");
    var restored = state.restoredEdits;
    say(readyText() + (restored ? " Your edits to " + restored + " cell" + (restored > 1 ? "s" : "") +
        " from your last visit are back; each edited cell has a reset button." : ""));
    state.restoredEdits = 0;
    return session;
  }

  function reportFailure(err) {
    state.error = String(err && err.message || err);
    setState("failed", err && err.kind || "other");
    var retry = [["Try again", reconnect]];
    if (err && (err.kind === "token" || err.kind === "no-token")) {
      retry = [[err.kind === "token" ? "Paste a new token" : "Paste a token", function () {
        forgetToken(config.server.url);
        reconnect();
      }]];
    }
    say("Live code could not start on " + (where() || "its server") + ": " + state.error + ".", retry);
    console.error("[rec11 live code]", err);
  }

  // "Try again", "Start it again", "Paste a new token": without reloading the page.
  function reconnect() {
    if (!live.notebook) {  // it failed before the cells were made live: start from the top
      state.started = null;
      return window.initThebe();
    }
    state.started = (async function () {
      setState("starting");
      if (config.server) {
        var source = await kernelSource(config);   // finds or starts the reader's server
        var settings = window.thebe.server.config.serverSettings;
        if (source.serverSettings.baseUrl !== settings.baseUrl || source.serverSettings.token !== settings.token) {
          await replaceServer(source);
        }
      }
      return newKernel();
    })().catch(reportFailure);
    return state.started;
  }

  // The reader's server moved or the token changed: a new Thebe server connection
  // (thebe-core's own API, which thebe 0.9.3 puts on window.thebeCore).
  async function replaceServer(source) {
    var api = window.thebeCore.api;
    var old = window.thebe.server;
    window.thebe.server = api.connectToJupyter(
      api.makeConfiguration(Object.assign({}, live.options, source), window.thebe.events));
    try { old.dispose(); } catch (e) { /* gone already */ }
  }

  async function start() {
    state.timings.click = performance.now();
    config = readConfig();
    if (!config) throw new Error("this page has no live-code configuration");
    setState("loading");
    say("Live code: loading Thebe " + config.thebeVersion + " …");
    await loadThebe(config);

    var source = await kernelSource(config);
    setState("starting");
    say("Live code: starting a kernel on " + where() + " …");
    window.thebe.on("status", onThebeStatus);

    var cells = markCells();
    live.options = Object.assign({
      requestKernel: false,         // the kernel is asked for below, so that it can be asked for again
      selector: "[data-executable]",
      outputSelector: "[data-output]",
      // Thebe renders text/latex outputs only when it has a MathJax URL; with no
      // mathjaxConfig it never loads it (no MathJax 2 from a CDN). rec11-livemath.js
      // typesets those outputs with the site's own MathJax 3, loaded on demand.
      mathjaxUrl: "_static/mathjax/tex-svg.js",
      mathjaxConfig: "",
      kernelOptions: config.kernel,
      codeMirrorConfig: { theme: "default", mode: "python", lineNumbers: true },
    }, source);

    var booted = await window.thebe.bootstrap(live.options);   // renders the cells; connects to the server
    live.notebook = booted.notebook;
    live.cells = cells;
    labelEditors(cells);
    state.timings.editor = performance.now();
    state.restoredEdits = installEdits(live.notebook, cells);
    live.order = installRunOrder(live.notebook, cells);
    return newKernel();
  }

  // A reader who leaves the page leaves its kernel: shut it down, so that a reader going
  // through the pages holds one kernel, not one per page until the server culls them.
  // (keepalive: the request outlives the page; the server's kernel culler is the backstop.)
  window.addEventListener("pagehide", function () {
    if (!live.session || !config || !config.server || !window.thebe || !window.thebe.server) return;
    var settings = window.thebe.server.config.serverSettings;
    try {
      fetch(settings.baseUrl + "api/sessions/" + encodeURIComponent(live.session.id),
            { method: "DELETE", keepalive: true, headers: { Authorization: "token " + settings.token } });
    } catch (e) { /* leaving anyway */ }
  });

  window.initThebe = function () {
    if (!state.started) state.started = start().catch(reportFailure);
    return state.started;
  };
})();
