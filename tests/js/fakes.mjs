/* Fakes for Live Code's unit tests: a JupyterHub's API, Thebe and its
 * kernels, websockets, storage, a clock, and the status line. Each fake
 * does only what the modules ask of the real thing, and records what
 * happened, so a test can say what the reader would have seen.
 */

import { createMachine } from "../../src/rec11_book/static/livecode/state.js";
import { createLiveCode } from "../../src/rec11_book/static/livecode/session.js";
import { editStore } from "../../src/rec11_book/static/livecode/edits.js";

// Let every pending promise and setImmediate run.
export const tick = () => new Promise((resolve) => setImmediate(resolve));

// Wait until `check()` holds: pending promises first, then real timers (a
// test's short grace periods run on the real clock), for two seconds at most.
// A count of ticks is not enough: on a busy machine 2,000 of them can pass
// before a 20 ms timer fires.
export async function until(check, what = "the condition") {
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline) {
    if (check()) return;
    await tick();
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  if (check()) return;
  throw new Error(`gave up waiting for ${what}`);
}

// localStorage / sessionStorage.
export class FakeStorage {
  constructor(entries = {}) {
    this.map = new Map(Object.entries(entries));
  }
  get length() { return this.map.size; }
  key(i) { return [...this.map.keys()][i] ?? null; }
  getItem(k) { return this.map.has(k) ? this.map.get(k) : null; }
  setItem(k, v) { this.map.set(k, String(v)); }
  removeItem(k) { this.map.delete(k); }
  keys() { return [...this.map.keys()]; }
}

// Time that moves only when the code waits: pause(ms) moves it on by ms,
// so a five-minute spawn times out at once.
export function fakeClock() {
  const clock = {
    t: 0,
    now: () => clock.t,
    pause: async (ms) => {
      clock.t += ms;
      await tick();
    },
  };
  return clock;
}

// @lumino/signaling's Signal, as much as the kernel's signals need.
export class Signal {
  constructor(owner) {
    this.owner = owner;
    this.slots = [];
  }
  connect(fn) { this.slots.push(fn); }
  disconnect(fn) { this.slots = this.slots.filter((f) => f !== fn); }
  emit(value) { for (const fn of [...this.slots]) fn(this.owner, value); }
}

// The network: which websockets a server accepts ("open"), refuses
// ("refuse") or never answers ("silent").
export function fakeNetwork() {
  const net = { ws: "open", sockets: [] };
  net.WebSocket = class {
    constructor(url) {
      this.url = url;
      this.closed = false;
      net.sockets.push(this);
      const outcome = net.ws;
      setImmediate(() => {
        if (outcome === "open") this.onopen && this.onopen();
        if (outcome === "refuse") {
          this.onerror && this.onerror();
          this.onclose && this.onclose();
        }
      });
    }
    close() { this.closed = true; }
  };
  return net;
}

let kernels = 0;

export class FakeKernel {
  constructor(serverSettings, net) {
    this.id = `kernel-${++kernels}`;
    this.serverSettings = serverSettings;
    this.connectionStatus = "connecting";
    this.status = "starting";
    this.statusChanged = new Signal(this);
    this.connectionStatusChanged = new Signal(this);
    // Thebe's own websocket opens when the server accepts websockets.
    if (net.ws === "open") setImmediate(() => this.connection("connected"));
  }
  connection(status) {
    this.connectionStatus = status;
    this.connectionStatusChanged.emit(status);
  }
  setStatus(status) {
    this.status = status;
    this.statusChanged.emit(status);
  }
}

// Thebe: bootstrap() renders the cells into a notebook; its server starts
// sessions whose kernels run the cells, each run recorded in `runs`.
export function fakeThebe(sources, net) {
  const thebe = { runs: [], sessions: [], replaced: 0, loaded: 0, busyCells: new Set() };
  const makeServer = (settings) => ({
    config: { serverSettings: settings },
    async startNewSession(rendermime, kernelOptions) {
      const session = {
        id: `session-${thebe.sessions.length + 1}`,
        kernel: new FakeKernel(settings, net),
        kernelOptions,
        shutDown: false,
        disposed: false,
        async shutdown() { session.shutDown = true; },
        dispose() { session.disposed = true; },
      };
      thebe.sessions.push(session);
      return session;
    },
  });
  const notebook = {
    rendermime: {},
    session: null,
    attachSession(session) { notebook.session = session; },
    cells: sources.map((source, i) => {
      const cell = {
        id: `cell-${i}`,
        source,
        outputs: [],
        area: { model: {
          clear: () => { cell.outputs = []; },
          add: (output) => cell.outputs.push(output),
        } },
        // Thebe's execute: runs the code in the attached session's kernel
        async execute(code = cell.source) {
          const kernel = notebook.session && notebook.session.kernel;
          if (!kernel) return undefined;
          await tick();
          thebe.runs.push({ cell: i, kernel: kernel.id, code });
          return code.includes("raise") ? { error: ["Traceback"] } : {};
        },
      };
      return cell;
    }),
  };
  Object.assign(thebe, {
    notebook,
    load: async () => { thebe.loaded++; },
    async bootstrap(options) {
      thebe.options = options;
      // a BinderHub hands out a server of its own once the image is built
      thebe.current = makeServer(options.serverSettings || {
        baseUrl: "https://hub.mybinder.test/user/x/", wsUrl: "wss://hub.mybinder.test/user/x/",
        token: "binder-token", appendToken: true });
      return { notebook };
    },
    server: () => thebe.current,
    replaceServer(options) {
      thebe.replaced++;
      thebe.current = makeServer(options.serverSettings);
    },
    onStatus(fn) { thebe.statusListener = fn; },
    setSession(session) { thebe.session = session; },
    busy: (id) => thebe.busyCells.add(id),
    idle: (id) => thebe.busyCells.delete(id),
    // the last session's kernel
    kernel: () => thebe.sessions[thebe.sessions.length - 1].kernel,
    ran: () => thebe.runs.map((r) => r.cell),
  });
  return thebe;
}

// A JupyterHub's REST API (the parts Live Code calls), at `url`.
// tokens: {token: user}. A server takes `spawnPolls` looks at the hub
// (GET /user) to become ready after it is asked to start (Infinity:
// never); while it starts, its progress stream sends `progress`.
export function fakeHub({ url = "http://hub.test/", tokens = {}, spawnPolls = 0,
                          progress = ["Server requested", "Spawning server..."] } = {}) {
  const hub = { url, tokens, spawnPolls, progress, servers: {}, calls: [] };
  const json = (body, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

  hub.fetch = async (target, options = {}) => {
    const method = options.method || "GET";
    hub.calls.push(`${method} ${target}`);
    if (!target.startsWith(url)) throw new TypeError("Failed to fetch");
    const path = target.slice(url.length);
    if (path.startsWith("user/")) return new Response(null, { status: 204 });
    const token = ((options.headers || {}).Authorization || "").replace(/^token /, "");
    const name = tokens[token];
    if (!name) return json({ status: 403, message: "Forbidden" }, 403);
    const server = hub.servers[name];
    if (method === "GET" && path === "hub/api/user") {
      if (server && server.pending && --server.polls <= 0) {
        Object.assign(server, { pending: null, ready: true });
      }
      return json({ name, servers: server ? { "": { ...server } } : {} });
    }
    const mine = `hub/api/users/${name}/server`;
    if (method === "POST" && path === mine) {
      if (server) return json({ message: "already running or pending" }, 400);
      hub.servers[name] = { ready: false, pending: "spawn", url: `/user/${name}/`,
                            polls: hub.spawnPolls };
      return new Response(null, { status: 202 });
    }
    if (method === "GET" && path === mine + "/progress") {
      if (!server || !server.pending) return json({ message: "not starting" }, 400);
      const events = hub.progress.map((m) => `data: ${JSON.stringify({ message: m })}\n\n`);
      return new Response(events.join(""), { status: 200 });
    }
    return json({ message: `no fake for ${method} ${path}` }, 404);
  };

  hub.start = (name) => {
    hub.servers[name] = { ready: true, pending: null, url: `/user/${name}/`, polls: 0 };
  };
  hub.stop = (name) => { delete hub.servers[name]; };
  return hub;
}

export const PAGE_PATH = "/book/page.html";

// The status line, and the page's cells as cells.js would mark them, with
// the reader's edits kept in `storage` as cells.js keeps them.
export function fakeUi(infos, storage) {
  const ui = {
    lines: [],
    actions: [],
    say(text, actions = []) {
      ui.lines.push(text);
      ui.actions = actions;
    },
    get last() { return ui.lines[ui.lines.length - 1]; },
    markCells: () => infos,
    labelEditors() {},
    installEdits(notebook, cells, onResetAll) {
      ui.onResetAll = onResetAll;
      ui.edits = editStore(storage, PAGE_PATH, notebook.cells.map((c) => c.source));
      return Object.keys(ui.edits.restored).length;
    },
    // press the status line's button labelled `label`
    press(label) {
      const found = ui.actions.find(([l]) => l === label);
      if (!found) {
        throw new Error(`no "${label}" button; buttons: ${ui.actions.map(([l]) => l)}`);
      }
      return found[1]();
    },
  };
  return ui;
}

export const HUB_CONFIG = {
  source: "jupyter-server",
  label: "the JupyterHub at hub.test",
  server: { url: "http://hub.test/", token: "", hub: true },
  kernel: { kernelName: "python3", path: "book/page.ipynb" },
  thebeVersion: "0.9.3",
  thebeJs: "../_static/thebe/index.js",
  thebeCss: "../_static/thebe/thebe.css",
  trainedModels: false,
};

export const SERVER_CONFIG = {
  ...HUB_CONFIG,
  label: "the Jupyter server at 127.0.0.1:8888",
  server: { url: "http://127.0.0.1:8888/", token: "secret", hub: false },
};

// Live Code on a fake page: cells (their code; a cell whose code starts
// with "#init" is a set-up cell), a hub or a server, and the reader's
// answers to the token prompt.
export function livePage({ config = HUB_CONFIG, sources = ["#init\nx = 1", "y = x + 1", "print(y)"],
                           hub = fakeHub(), answers = [], storage = new FakeStorage(),
                           timing = {} } = {}) {
  const clock = fakeClock();
  const net = fakeNetwork();
  const thebe = fakeThebe(sources, net);
  const infos = sources.map((s) => ({ init: s.startsWith("#init"), raises: s.includes("raise") }));
  const ui = fakeUi(infos, storage);
  const sessionStorage = new FakeStorage();
  const asked = [];
  const logged = [];
  const machine = createMachine({ now: clock.now });
  const live = createLiveCode({
    machine,
    config,
    ui,
    thebe,
    fetch: hub.fetch,
    WebSocket: net.WebSocket,
    setTimeout,
    clearTimeout,
    now: clock.now,
    pause: clock.pause,
    sessionStorage,
    prompt: (text) => {
      asked.push(text);
      return answers.length > 1 ? answers.shift() : answers[0];
    },
    log: (...args) => logged.push(args),
    // real timers: long enough never to run out on a busy machine when the
    // connection opens; tests of a silent one make it short
    timing: { connect: 5000, lostGrace: 20, ...timing },
  });
  // what main.js does when Live Code is pressed
  const press = () => {
    machine.view.timings.click = clock.now();
    machine.transition("click");
    machine.view.started = live.begin();
    return machine.view.started;
  };
  return { live, machine, view: machine.view, ui, thebe, hub, net, clock, sessionStorage,
           asked, logged, press };
}
