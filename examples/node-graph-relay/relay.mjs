// The Graph-run relay in JavaScript: the desktop relay loop (as the desktop's TypeScript
// hook runs it) and the server's side of it (the agent tools, the command queue, the run
// records), sans-I/O: whoever drives them carries the requests and answers, and may lose
// them. Written from the documents (graph-relay.md), independently of osf_check.relay.
import { readFileSync, writeFileSync, renameSync, existsSync } from "node:fs";

export const RESULT_LIMIT = 100_000; // JSON.stringify(payload).length
export const ERROR_LIMIT = 2_000;
export const NOT_FOUND = "Graph run not found or access removed";
export const NOT_SHARED = "Graph session is no longer shared with this project";
// a start for a session no sync uploaded: no desktop would ever fetch its run
export const NOT_LISTED = "Graph session not shared with a connected project";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

// The completion the desktop posts: whole if JSON.stringify of it is at most 100,000
// long, else only {execution_id, status, result_truncated: true}.
export function completionPayload(executionId, status, result, tokens, cost, error) {
  const full = { execution_id: executionId, status, result, total_tokens: tokens,
                 reported_cost: cost };
  if (error != null) full.error = error.slice(0, ERROR_LIMIT);
  if (JSON.stringify(full).length <= RESULT_LIMIT) return full;
  return { execution_id: executionId, status, result_truncated: true };
}

// Completions written to a file before they are posted; a restart (reopen) reads back
// every one not yet acknowledged.
export class Outbox {
  constructor(path) { this.path = path; this.open(); }
  open() {
    const saved = existsSync(this.path) ? JSON.parse(readFileSync(this.path, "utf8")) : [];
    this.rows = new Map(saved.map(([id, payload]) => [id, payload]));
  }
  reopen() { this.rows = null; this.open(); }
  save() {
    writeFileSync(this.path + ".tmp", JSON.stringify([...this.rows]));
    renameSync(this.path + ".tmp", this.path);
  }
  put(id, payload) { this.rows.delete(id); this.rows.set(id, payload); this.save(); }
  remove(id) { this.rows.delete(id); this.save(); }
  has(id) { return this.rows.has(id); }
  entries() { return [...this.rows.values()]; }
}

export class DesktopRelay {
  constructor(outboxPath, projects) {
    this.outbox = new Outbox(outboxPath);
    this.projects = projects; // project id -> the Graph session shared with it
    this.enabled = Object.fromEntries(Object.keys(projects).map((p) => [p, true]));
    this.online = true;
    this.phase = "idle"; // idle, sync, work
    this.shared = true;
    this.slug = "";
    this.commands = new Map(); // command id -> {id, session, slug, state, outcome}
    this.round = 0; // a reply names its round: one lost and delivered late is ignored
  }
  get busy() { return this.phase !== "idle"; }

  // The 20 s timer: skipped while busy or offline; a round starts by re-sending every
  // completion still in the outbox.
  tick() {
    if (this.busy || !this.online) return [];
    this.phase = "sync";
    this.round += 1;
    return this.outbox.entries();
  }
  // The owner changed sharing: a round starts right away, as the timer would.
  sharingChanged() { return this.tick(); }
  syncRequests() {
    const out = [];
    for (const [project, session] of Object.entries(this.projects)) {
      if (!this.enabled[project]) continue;
      const meta = this.shared ? [{ graph_session_id: session, name: "graph",
        description: "a shared Graph", slug: this.slug, version: 1, status: "ready" }] : [];
      out.push({ project_id: project, sessions: meta });
    }
    return out;
  }
  syncReply(commands, round = this.round) {
    if (this.phase !== "sync" || round !== this.round) return []; // that call was given up
    for (const c of commands) {
      // the server sends a running command again (a reply may have been lost): run it once
      if (this.commands.has(c.command_id)) continue;
      this.commands.set(c.command_id, { id: c.command_id, session: c.graph_session_id,
                                        slug: c.slug, state: "fetched", outcome: null,
                                        arguments: c.arguments ?? {} });
    }
    this.phase = "work";
    return this.work();
  }
  syncFailed() { this.phase = "idle"; }
  executing() {
    return [...this.commands.values()].filter((c) => c.state === "running" || c.state === "stopping");
  }
  nextCommand() {
    if (this.phase !== "work" || this.executing().length) return null;
    return [...this.commands.values()].find((c) => c.state === "fetched") ?? null;
  }
  // Consent is checked again right before a Graph runs: enabled, shared, same slug.
  consent(c) {
    const project = Object.keys(this.projects).find((p) => this.projects[p] === c.session);
    return project !== undefined && this.enabled[project] && this.shared && c.slug === this.slug;
  }
  startOrRefuse(c) {
    if (this.consent(c)) { c.state = "running"; return null; }
    c.state = "done"; c.outcome = "cancelled";
    return this.complete(c, "cancelled", null, 0, 0, NOT_SHARED);
  }
  controlPoll(c, cancelled) {
    if (c.state === "running" && cancelled) { c.state = "stopping"; c.outcome = "cancelled"; }
  }
  finish(c, status, result, tokens, cost, error = null) {
    if (c.state === "stopping") status = "cancelled";
    c.state = "done"; c.outcome = status;
    return this.complete(c, status, result, tokens, cost, error);
  }
  // The Graph ended: its completion is kept and posted, and the loop goes straight on.
  graphEnded(c, status, result, tokens, cost, error) {
    const payload = this.finish(c, status, result, tokens, cost, error);
    return { payload, next: this.work() };
  }
  // The loop, after the sync reply and after each Graph: the fetched commands in order,
  // each refused (its consent gone) or started, until one runs. Returns what it did.
  work() {
    const did = [];
    for (let c = this.nextCommand(); c !== null; c = this.nextCommand()) {
      did.push({ id: c.id, payload: this.startOrRefuse(c) });
    }
    return did;
  }
  complete(c, status, result, tokens, cost, error) {
    const payload = completionPayload(c.id, status, result, tokens, cost, error);
    this.outbox.put(c.id, payload); // written first, then posted
    return payload;
  }
  acked(id) { this.outbox.remove(id); }
  roundEnd() {
    const cs = [...this.commands.values()];
    if (this.phase === "work" && !this.executing().length && !cs.some((c) => c.state === "fetched")) {
      this.phase = "idle";
    }
  }
}

// The agent's side of get_graph_run and cancel_graph_run: what it knows of each of its runs
// (by command id). An answer may come late, after a newer one; a run's status only moves
// forward, and a terminal one keeps the first completion read, so an older answer is ignored.
const PROGRESS = { queued: 0, running: 1, completed: 2, failed: 2, cancelled: 2 };
export function takeAnswer(known, answer) {
  const was = known[answer.command_id];
  const a = PROGRESS[was?.status] ?? -1, b = PROGRESS[answer.status] ?? -1;
  const newer = was === undefined || (b !== a ? b > a : a < 2 || Object.keys(was).length <= 2);
  if (newer) known[answer.command_id] = answer;
}

export class GraphServer {
  constructor(seed) {
    this.rng = seed >>> 0;
    this.runs = []; // in creation order
    this.byKey = new Map(); // agent + key -> command id
    this.sessions = {}; // session id -> {slug, project_id}
  }
  newId() { // a reproducible UUID v4 (mulberry32)
    const hex = [];
    for (let i = 0; i < 4; i++) {
      let t = (this.rng += 0x6d2b79f5);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      hex.push((((t ^ (t >>> 14)) >>> 0).toString(16)).padStart(8, "0"));
    }
    const h = hex.join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
  find(id) { return this.runs.find((r) => r.command_id === id) ?? null; }
  own(agent, id) {
    const run = this.find(id);
    if (run === null || run.agent !== agent) throw new Error(NOT_FOUND); // one answer for both
    return run;
  }
  runGraphSession(agent, { graph_session_id: sid, idempotency_key: key, arguments: args = {} }) {
    const slot = `${agent}\u0000${key}`; // one run per agent and key, as the key is given
    const seen = this.byKey.get(slot);
    if (seen !== undefined) { // a retry: the same run, whatever its status now
      const run = this.find(seen);
      return { command_id: run.command_id, status: run.status };
    }
    const meta = this.sessions[sid];
    if (meta === undefined) throw new Error(NOT_LISTED);
    const run = { command_id: this.newId(), agent, key, session: sid, slug: meta.slug ?? "",
                  arguments: args, status: "queued", cancel_flag: false, completion: null,
                  project_id: meta.project_id ?? "" };
    this.runs.push(run);
    this.byKey.set(slot, run.command_id);
    return { command_id: run.command_id, status: run.status };
  }
  getGraphRun(agent, id) {
    const run = this.own(agent, id);
    return { command_id: run.command_id, status: run.status, ...(run.completion ?? {}) };
  }
  cancelGraphRun(agent, id) {
    const run = this.own(agent, id);
    if (run.status === "queued") run.status = "cancelled";
    else if (run.status === "running") run.cancel_flag = true;
    return { command_id: run.command_id, status: run.status };
  }
  sync(projectId, sessions) {
    for (const [k, m] of Object.entries(this.sessions)) {
      if (m.project_id === projectId) delete this.sessions[k];
    }
    for (const s of sessions) this.sessions[s.graph_session_id] = { slug: s.slug, project_id: projectId };
    const out = [];
    for (const run of this.runs) {
      // a running one again too: the reply that carried it may have been lost
      if ((run.status === "queued" || run.status === "running") && run.project_id === projectId) {
        run.status = "running";
        out.push({ command_id: run.command_id, graph_session_id: run.session, slug: run.slug,
                   arguments: run.arguments });
      }
    }
    return out;
  }
  control(id) { const run = this.find(id); return Boolean(run && run.cancel_flag); }
  complete(payload) {
    const run = this.find(payload.execution_id);
    if (run === null || TERMINAL.has(run.status)) return;
    run.status = payload.status;
    const { execution_id, status, ...kept } = payload;
    run.completion = kept;
  }
}
