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
 */
(function () {
  "use strict";

  var CONFIG_ID = "rec11-live-code-config";
  var TOKEN_KEY = "rec11-live-code-token:";
  var state = {
    state: "idle",          // idle | loading | starting | ready | failed
    timings: {},            // performance.now() at click, kernel (session attached), ready (set-up done)
    error: null,
    started: null,          // the promise initThebe() returns
  };
  window.rec11LiveCode = state;

  function readConfig() {
    var el = document.getElementById(CONFIG_ID);
    return el ? JSON.parse(el.textContent) : null;
  }

  function setState(name) {
    state.state = name;
    document.documentElement.setAttribute("data-rec11-live-code", name);
  }

  // --- the status line under the page title ------------------------------------------

  function statusLine() {
    var line = document.querySelector(".rec11-live-status");
    if (line) return line;
    line = document.createElement("p");
    // The theme inserts an empty <button class="thebe-launch-button"> after the title
    // before calling initThebe(), and skips that when the class is already there; a
    // status line is not a button, so it takes the button's place and its class.
    line.className = "rec11-live-status thebe-launch-button";
    line.setAttribute("role", "status");
    line.setAttribute("aria-live", "polite");
    var placeholder = document.querySelector("button.thebe-launch-button");
    var title = document.querySelector("section h1") || document.querySelector("article h1");
    if (placeholder) placeholder.replaceWith(line);
    else if (title) title.insertAdjacentElement("afterend", line);
    else (document.querySelector("article") || document.body).prepend(line);
    return line;
  }

  function say(text) {
    statusLine().textContent = text;
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

  function askToken(url, question) {
    var key = TOKEN_KEY + url;
    var token = window.sessionStorage.getItem(key);
    if (!token) {
      token = (window.prompt(question) || "").trim();
      if (!token) throw new Error("no token given");
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

  async function hubJson(url, token, method) {
    var response = await fetch(url, { method: method || "GET", headers: { Authorization: "token " + token } });
    if (response.status === 401 || response.status === 403) throw new Error("the hub refused the token");
    if (!response.ok && response.status !== 202) throw new Error("the hub answered " + response.status);
    return response.status === 204 || response.status === 202 || method === "POST" ? null : response.json();
  }

  // A JupyterHub: find the reader's own server through the hub API, starting it if needed.
  async function hubServerUrl(hub, token) {
    var api = hub + "hub/api/";
    var user = await hubJson(api + "user", token);
    if (!user.server) {
      say("Live code: starting your server on " + new URL(hub).host + " …");
      await hubJson(api + "users/" + encodeURIComponent(user.name) + "/server", token, "POST");
      for (var i = 0; i < 150 && !user.server; i++) {
        await pause(2000);
        user = await hubJson(api + "user", token);
      }
      if (!user.server) throw new Error("your server on the hub did not start");
    }
    return new URL(user.server, hub).href;
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
    var token = server.token;
    if (!token) {
      token = askToken(server.url, server.hub
        ? "Live code runs on the JupyterHub at " + new URL(server.url).host + ". Paste an API token " +
          "from its Token page (" + server.url + "hub/token):"
        : "Live code runs on the Jupyter server at " + new URL(server.url).host + ". Paste its token:");
    }
    var baseUrl = server.hub ? await hubServerUrl(server.url, token) : server.url;
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
      info.element.querySelectorAll(".thebe-controls button").forEach(function (button) {
        button.setAttribute("type", "button");
      });
    });
  }

  // --- running cells in order --------------------------------------------------------------

  function failed(result) {
    return result == null || (result.error && result.error.length > 0);
  }

  function firstLine(source) {
    var line = (source || "").split("\n").find(function (l) { return l.trim(); }) || "";
    return line.length > 60 ? line.slice(0, 57) + "…" : line;
  }

  function installRunOrder(notebook, cells, kernelReady) {
    var ran = new Set();
    var plain = notebook.cells.map(function (cell) { return cell.execute.bind(cell); });
    var busy = window.thebe.setButtonsBusy || function () {};
    var idle = window.thebe.clearButtonsBusy || function () {};
    var queue = kernelReady;

    async function runOne(i, source) {
      var cell = notebook.cells[i];
      busy(cell.id);
      var result = await plain[i](source === undefined ? cell.source : source);
      idle(cell.id);
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
          var target = notebook.cells[i];
          target.area.model.clear();
          target.area.model.add({
            output_type: "stream", name: "stderr",
            text: "Not run: an earlier cell raised an error (the one starting \"" +
                  firstLine(notebook.cells[todo[k]].source) + "\"). Fix it, then run this cell again.\n",
          });
          say(readyText());
          return earlier.result;
        }
      }
      var mine = await runOne(i, source);
      if (todo.length) say(readyText());
      return mine.result;
    }

    notebook.cells.forEach(function (cell, i) {
      cell.execute = function (source) {
        var job = queue.then(function () { return runWithEarlier(i, source); });
        queue = job.catch(function () {});
        return job;
      };
    });

    return {
      runInit: function () {
        var job = queue.then(async function () {
          for (var i = 0; i < cells.length; i++) if (cells[i].init) await runOne(i);
        });
        queue = job.catch(function () {});
        return job;
      },
      forget: function () { ran.clear(); },
    };
  }

  // --- start -----------------------------------------------------------------------------

  var config = null;

  function where() {
    if (!config) return "";
    if (config.source === "binder") {
      return config.label + " (" + config.binder.repo + ", " + config.binder.ref + ")";
    }
    return config.label;
  }

  function readyText() {
    return "Live code is ready: a " + config.kernel.kernelName + " kernel on " + config.label +
           ". Edit any cell and run it with its run button or Shift+Enter; cells above it run first if needed.";
  }

  function onThebeStatus(_, data) {
    if (state.state !== "starting" || !data || !data.message) return;
    if (data.subject === "server") {
      var message = data.message.length > 120 ? data.message.slice(0, 117) + "…" : data.message;
      say("Live code: starting a kernel on " + where() + ". " + message);
    }
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
    var options = Object.assign({
      requestKernel: true,
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

    var booted = window.thebe.bootstrap(options);   // renders the cells synchronously
    var notebook = window.thebe.notebook;
    labelEditors(cells);
    var kernelReady = booted.then(function (result) {
      if (!result || !result.session) throw new Error("no kernel session");
      state.timings.kernel = performance.now();
      return result;
    });
    var order = installRunOrder(notebook, cells, kernelReady);

    var result;
    try {
      result = await kernelReady;
    } catch (err) {
      if (config.server) forgetToken(config.server.url);
      throw err;
    }
    var kernel = result.session.kernel;
    if (kernel && kernel.statusChanged) {
      kernel.statusChanged.connect(function (_, status) {
        if (status === "restarting" || status === "autorestarting") order.forget();
      });
    }
    if (cells.some(function (c) { return c.init; })) say("Live code: running the page's set-up cells …");
    await order.runInit();
    state.timings.ready = performance.now();
    setState("ready");
    say(readyText());
    return result;
  }

  window.initThebe = function () {
    if (!state.started) {
      state.started = start().catch(function (err) {
        state.error = String(err && err.message || err);
        setState("failed");
        say("Live code could not start on " + (where() || "its server") + ": " + state.error +
            ". Reload the page to try again.");
        console.error("[rec11 live code]", err);
      });
    }
    return state.started;
  };
})();
