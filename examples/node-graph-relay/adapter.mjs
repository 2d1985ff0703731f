// The osf-check adapter of relay.mjs (driver protocol 1, docs/driver-protocol.md):
//   osf-check fuzz --model graph-relay --impl "node examples/node-graph-relay/adapter.mjs"
// It plays the agent and the network around the implementation, performs each model
// action it is sent, and answers with the implementation's state as the model's state.
import { createInterface } from "node:readline";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DesktopRelay, GraphServer, NOT_FOUND, NOT_LISTED, takeAnswer } from "./relay.mjs";

const CALL = ["idle", "waiting", "lost", "done", "refused"];
const OUTCOME = ["none", "completed", "failed", "cancelled"];
const LATE = { get: "get_graph_run's answer", cancel: "cancel_graph_run's answer",
               post: "a completion POST", ack: "a completion's 2xx",
               sync: "a sync reply", poll: "a control poll's answer" };
const sessionOf = (p) => (p === 0 ? "gs_" + "ab".repeat(16) : `gs_${p.toString(16).padStart(2, "0")}` + "cd".repeat(15));
const projectOf = (p) => `proj_${p + 1}`;

class World {
  constructor(params, seed, dir) {
    this.p = { intents: params.intents, runs: params.intents, projects: params.projects,
               slugs: params.slugs, listing: params.listing ?? 0 };
    this.seed = seed;
    this.dir = dir;
    this.fresh();
  }
  fresh() {
    const { intents, projects, slugs } = this.p;
    this.server = new GraphServer(this.seed);
    const map = {};
    for (let p = 0; p < projects; p++) map[projectOf(p)] = sessionOf(p);
    rmSync(join(this.dir, "outbox.json"), { force: true });
    this.desktop = new DesktopRelay(join(this.dir, "outbox.json"), map);
    this.slugs = Array.from({ length: slugs }, (_, k) => `slug-${k}`);
    this.desktop.slug = this.slugs[0];
    this.publish();
    this.call = Array(intents).fill("idle");
    this.attempts = Array(intents).fill(0);
    this.ticket = Array(intents).fill(0);
    this.net = {}; // command id -> [sent|acked, payload]
    this.qcancel = Array(this.p.runs).fill(false);
    this.intentOf = {}; // idempotency key -> the intent that sent it
    this.violations = [];
    this.sent = [];
    this.known = {}; // what the agent knows of its runs, from the answers it took
    this.held = {}; // "kind:r" -> the first answer of that kind the network lost for run r
  }
  publish() { // listing=0: the server knows the shared sessions with the desktop's current slug
    if (this.p.listing) return; // listing=1: the model keeps what the syncs uploaded
    this.server.sessions = {};
    for (let p = 0; p < this.p.projects; p++) {
      this.server.sessions[sessionOf(p)] = { slug: this.desktop.slug, project_id: projectOf(p) };
    }
  }
  cid(r) { return this.server.runs[r]?.command_id ?? null; }
  post(payload) {
    if (!payload) return;
    this.net[payload.execution_id] = ["sent", payload];
    this.sent.push({ post: payload }); // reported: the checker judges the payload itself
  }
  ran(did) { // the relay's loop went on by itself: its own model steps, reported in took
    for (const { id, payload } of did) {
      const r = this.server.runs.findIndex((x) => x.command_id === id);
      this.took.push(`${payload ? "refuse" : "start_graph"}(r=${r})`);
      this.post(payload);
    }
  }
  step(action, a, data) {
    const d = this.desktop, s = this.server, out = {};
    this.took = [];
    const command = (r) => d.commands.get(this.cid(r));
    switch (action) {
      case "run_graph_session": { // the key and the arguments are osf-check's choice
        const key = data.key;
        this.intentOf[key] = a.i;
        this.attempts[a.i] += 1;
        let t;
        try {
          t = s.runGraphSession(0, { graph_session_id: sessionOf(a.i % this.p.projects),
                                     idempotency_key: key, arguments: data.arguments });
        } catch (e) { // listing=1: an unlisted session is refused (the model says whether)
          if (!this.p.listing || e.message !== NOT_LISTED) throw e;
          this.call[a.i] = "refused";
          break;
        }
        this.ticket[a.i] = s.runs.findIndex((r) => r.command_id === t.command_id);
        this.call[a.i] = "waiting";
        break;
      }
      case "lose_request": this.attempts[a.i] += 1; this.call[a.i] = "lost"; break;
      case "lose_response": this.call[a.i] = "lost"; break;
      case "lose_call_request": break; // never reached the server
      case "lose_get_reply": this.held[`get:${a.r}`] ??= s.getGraphRun(0, s.runs[a.r].command_id); break;
      case "lose_sync_request": d.syncFailed(); break;
      case "lose_sync_reply": { // the last one lost is held: it may arrive late
        const reqs = d.syncRequests(), cmds = reqs.flatMap((q) => s.sync(q.project_id, q.sessions));
        this.held.sync = reqs.length ? [cmds, d.round] : undefined; // no call made: none comes
        this.publish();
        d.syncFailed();
        break;
      }
      case "lose_poll_request": break; // the Graph keeps running
      case "lose_poll_reply": s.control(command(a.r).id); break;
      case "answer_ticket": this.call[a.i] = "done"; break;
      case "lose_cancel_reply": // the server cancels all the same
      case "cancel_graph_run":
      case "get_graph_run":
        if ("i" in a) {
          const run = s.runs[a.r];
          if (action === "get_graph_run") {
            const answer = s.getGraphRun(0, run.command_id);
            this.sent.push({ answer });
            takeAnswer(this.known, answer);
          } else {
            const queued = run.status === "queued";
            const answer = s.cancelGraphRun(0, run.command_id);
            if (queued) this.qcancel[a.r] = true;
            if (action === "cancel_graph_run") takeAnswer(this.known, answer);
            else this.held[`cancel:${a.r}`] ??= answer;
          }
        } else { // another agent, with a run's id or a made-up one
          const target = this.cid(a.r) ?? data.unknown_id;
          try {
            (action === "get_graph_run" ? s.getGraphRun : s.cancelGraphRun).call(s, a.a + 1, target);
            out.answer = "answered";
          } catch (e) { out.answer = e.message === NOT_FOUND ? "not_found" : "access_denied"; }
        }
        break;
      case "tick": // the 20 s timer, or (cause "sharing") the owner's change of sharing
        for (const p of data.cause === "sharing" ? d.sharingChanged() : d.tick()) {
          if (!(p.execution_id in this.net)) this.net[p.execution_id] = ["sent", p];
        }
        break;
      case "sync": {
        const cmds = d.syncRequests().flatMap((req) => s.sync(req.project_id, req.sessions));
        this.publish();
        this.ran(d.syncReply(cmds));
        break;
      }
      case "sync_failed": d.syncFailed(); break;
      case "start_graph": // the relay's loop takes these by itself, with a sync or a finish
      case "refuse": break;
      case "control_poll":
      case "control_poll_clear": {
        const c = command(a.r);
        d.controlPoll(c, s.control(c.id));
        break;
      }
      case "graph_finish": {
        const { payload, next } = d.graphEnded(command(a.r), OUTCOME[a.o], data.result,
                                               data.tokens, data.cost, data.error ?? null);
        this.post(payload);
        this.ran(next);
        break;
      }
      case "round_end": d.roundEnd(); break;
      case "go_offline": d.online = false; break;
      case "go_online": d.online = true; break;
      case "deliver_post": {
        const cid = this.cid(a.r);
        s.complete(this.net[cid][1]);
        this.net[cid] = ["acked", this.net[cid][1]];
        break;
      }
      case "lose_post":
      case "lose_ack": {
        const cid = this.cid(a.r);
        this.held[`${action === "lose_post" ? "post" : "ack"}:${a.r}`] ??= this.net[cid][1];
        delete this.net[cid];
        break;
      }
      case "receive_ack": { const cid = this.cid(a.r); d.acked(cid); delete this.net[cid]; break; }
      case "late_post": { // the lost POST, delivered now: its 2xx is lost in turn (held)
        const held = this.held[`post:${a.r}`];
        delete this.held[`post:${a.r}`];
        s.complete(held);
        this.held[`ack:${a.r}`] ??= held;
        break;
      }
      case "late_ack": delete this.held[`ack:${a.r}`]; d.acked(this.cid(a.r)); break;
      case "toggle_project": { const p = projectOf(a.p ?? 0); d.enabled[p] = !d.enabled[p]; break; }
      case "toggle_share": d.shared = !d.shared; break;
      case "change_slug":
        d.slug = this.slugs[(this.slugs.indexOf(d.slug) + 1) % this.slugs.length];
        this.publish();
        break;
      default: throw new Error(`unknown action ${action}`);
    }
    return out;
  }
  late(after, answers) { // answers the network lost arrive now, each to its receiver
    const done = [];
    for (const { kind, r } of answers) {
      const held = this.held[kind === "sync" ? kind : `${kind}:${r}`];
      if (kind === "poll") this.desktop.controlPoll(this.desktop.commands.get(this.cid(r)), true);
      else if (held === undefined) continue;
      else if (kind === "sync") this.desktop.syncReply(...held);
      else if (kind === "post") this.server.complete(held);
      else if (kind === "ack") this.desktop.acked(held.execution_id);
      else takeAnswer(this.known, held);
      done.push(`${LATE[kind]} after ${after}`);
    }
    return done;
  }
  offers() {
    const d = this.desktop, out = [];
    const c = d.nextCommand();
    if (c !== null) {
      const r = this.server.runs.findIndex((x) => x.command_id === c.id);
      out.push(d.consent(c) ? `start_graph(r=${r})` : `refuse(r=${r})`);
    }
    if (d.online && !d.busy) out.push("tick");
    return out.sort();
  }
  state() { // the abstraction: the implementation as a state of the model
    const runs = this.server.runs, d = this.desktop, R = this.p.runs;
    if (runs.length > R || runs.some((run) => !(run.key in this.intentOf))) return null;
    const at = (f) => Array.from({ length: R }, (_, r) => f(runs[r] ?? null, r));
    const cmd = (run) => (run ? d.commands.get(run.command_id) : undefined);
    return {
      call: [...this.call], attempts: [...this.attempts], ticket: [...this.ticket],
      status: at((run) => (run ? run.status : "none")),
      // a slot with no run holds the key no intent sends (the model's no_key)
      key: at((run) => (run ? this.intentOf[run.key] : this.p.intents)),
      slug: at((run) => Math.max(0, run ? this.slugs.indexOf(run.slug) : 0)),
      flag: at((run) => Boolean(run && run.cancel_flag)),
      proj: at((run) => (run ? Object.keys(d.projects).indexOf(run.project_id) : 0)),
      result: at((run) => Boolean(run?.completion)),
      qcancel: [...this.qcancel], online: d.online, phase: d.phase,
      exec: at((run) => cmd(run)?.state ?? "none"),
      outcome: at((run) => cmd(run)?.outcome ?? "none"),
      outbox: at((run) => Boolean(run && d.outbox.has(run.command_id))),
      post: at((run) => (run && this.net[run.command_id] ? this.net[run.command_id][0] : "none")),
      enabled: Object.keys(d.projects).map((p) => d.enabled[p]),
      shared: d.shared, cur_slug: this.slugs.indexOf(d.slug),
      ...(this.p.listing ? this.listing() : {}),
    };
  }
  listing() { // the server's list per project: its session listed or not, and its slug
    const meta = Array.from({ length: this.p.projects }, (_, p) => this.server.sessions[sessionOf(p)]);
    const mine = meta.map((m, p) => m !== undefined && m.project_id === projectOf(p));
    return { listed: mine,
             up_slug: meta.map((m, p) => (mine[p] ? Math.max(0, this.slugs.indexOf(m.slug)) : 0)) };
  }
  observe() {
    const state = this.state(), violations = this.violations.splice(0), sent = this.sent.splice(0);
    const odd = this.server.runs.find((run) => !(run.key in this.intentOf));
    if (odd) violations.push(`the server changed the idempotency key of run ${odd.command_id}`);
    if (state === null) violations.push(`property A1 violated by the implementation: it holds ${this.server.runs.length} runs where the model allows ${this.p.runs}`);
    return { ...(state === null ? {} : { state }), offers: this.offers(), violations, sent,
             known: this.known };
  }
  save() { // everything but the outbox file, which is saved by value
    const { server, desktop, ...rest } = this;
    return JSON.stringify({ rest, server: { ...server, byKey: [...server.byKey] },
      desktop: { ...desktop, outbox: [...desktop.outbox.rows], commands: [...desktop.commands] } });
  }
  load(text) {
    const { rest, server, desktop } = JSON.parse(text);
    Object.assign(this, rest);
    Object.assign(this.server, server, { byKey: new Map(server.byKey) });
    const { outbox, commands, ...fields } = desktop;
    Object.assign(this.desktop, fields, { commands: new Map(commands) });
    this.desktop.outbox.rows = new Map(outbox);
    this.desktop.outbox.save();
  }
}

const dir = mkdtempSync(join(tmpdir(), "osf-node-relay-"));
let world = null;
const snaps = new Map();
let nextSnap = 0;
const reply = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  try {
    switch (m.type) {
      case "hello":
        world = new World(m.params, m.seed, dir);
        return reply({ type: "welcome", id: m.id, protocol: 1,
                       implementation: "node-graph-relay (JavaScript)", capabilities: ["snapshot", "reopen", "idle", "late", "late_steps"],
                       late_kinds: Object.keys(LATE) });
      case "reset": world.fresh(); break;
      case "step": {
        const outputs = world.step(m.action, m.args, m.data ?? {});
        const took = world.took.length ? { took: [m.label, ...world.took] } : {};
        return reply({ type: "observed", id: m.id, ...world.observe(), outputs, ...took });
      }
      case "observe": break;
      case "late": { // after a step or a restart: osf-check lists the answers that may arrive
        const delivered = world.late(m.after, m.answers);
        return reply({ type: "observed", id: m.id, ...world.observe(), delivered });
      }
      // the 20 s timer, or the loop asking whether its round is over, where the model
      // skips them: the relay must change nothing (osf-check compares the states)
      case "idle":
        if (m.event !== "tick" && m.event !== "round_end") throw new Error(`no idle event ${m.event}`);
        world.step(m.event, {}, m.cause ? { cause: m.cause } : {});
        break;
      case "snapshot": snaps.set(String(nextSnap), world.save());
        return reply({ type: "saved", id: m.id, snapshot: String(nextSnap++) });
      case "restore": world.load(snaps.get(m.snapshot)); break;
      case "drop": snaps.delete(m.snapshot); return reply({ type: "ok", id: m.id });
      case "reopen": world.desktop.outbox.reopen(); break;
      case "bye":
        reply({ type: "ok", id: m.id });
        rmSync(dir, { recursive: true, force: true });
        return process.exit(0);
      default: throw new Error(`unknown request ${m.type}`);
    }
    reply({ type: "observed", id: m.id, ...world.observe() });
  } catch (e) {
    reply({ type: "error", id: m.id, message: String(e && e.stack ? e.stack.split("\n")[0] : e) });
  }
});
