// The stored conversations as a list to find one in: each row with the opening words, word and
// speaker counts, and badges for what can be done with it (stored audio to play and re-diarize,
// shadow, re-diarized and reference labellings to compare); search and filters over the loaded pages.
//
// GET /v1/conversations gives neither the words nor the labellings nor whether audio was kept, so
// each row asks for them once (three small requests, a few at a time to stay within the rate limit)
// and keeps the answer.
import { api } from "./api.js";

/// Requests in flight at once for the rows' details (the server allows 20 a second, bursts of 60).
const concurrency = 3;
const previewCharacters = 140;

function element(name, className, text) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class ConversationList {
  /// `open(id)`: what a click on a row does.
  constructor(open) {
    this.open = open;
    this.body = document.querySelector("#conversation-table tbody");
    this.more = document.getElementById("conversations-more");
    this.count = document.getElementById("conversation-count");
    this.controls = {
      search: document.getElementById("conversation-search"),
      status: document.getElementById("conversation-status"),
      provider: document.getElementById("conversation-provider"),
      audio: document.getElementById("conversation-with-audio"),
      compared: document.getElementById("conversation-compared"),
    };
    this.controls.search.oninput = () => this.render();
    for (const control of [this.controls.status, this.controls.provider, this.controls.audio, this.controls.compared]) {
      control.onchange = () => this.render();
    }
    this.more.onclick = () => this.load(this.cursor);
    this.conversations = [];
    this.details = new Map();
    this.queue = [];
    this.running = 0;
  }

  async load(cursor) {
    const page = await api.get(`/v1/conversations?limit=20${cursor ? "&cursor=" + encodeURIComponent(cursor) : ""}`);
    this.conversations = cursor ? [...this.conversations, ...page.conversations] : page.conversations;
    this.cursor = page.next_cursor;
    this.more.hidden = !this.cursor;
    this.refreshChoices();
    this.render();
    for (const conversation of page.conversations) this.request(conversation.id);
  }

  /// The status and provider filters offer the values the loaded conversations have.
  refreshChoices() {
    for (const [select, key] of [[this.controls.status, "status"], [this.controls.provider, "provider"]]) {
      const chosen = select.value;
      const values = [...new Set(this.conversations.map((c) => c[key]))].sort();
      select.replaceChildren(new Option("any", ""), ...values.map((v) => new Option(v, v)));
      select.value = values.includes(chosen) ? chosen : "";
    }
  }

  matches(conversation) {
    const { search, status, provider, audio, compared } = this.controls;
    const details = this.details.get(conversation.id);
    if (status.value && conversation.status !== status.value) return false;
    if (provider.value && conversation.provider !== provider.value) return false;
    if (audio.checked && !details?.audio) return false;
    if (compared.checked && !((details?.labellings?.length ?? 0) > 1)) return false;
    const needle = search.value.trim().toLowerCase();
    if (!needle) return true;
    const haystack = [conversation.id, conversation.device_id, conversation.provider, details?.preview ?? "",
      ...(conversation.speakers || []).map((s) => s.name)].join(" ").toLowerCase();
    return haystack.includes(needle);
  }

  render() {
    const shown = this.conversations.filter((c) => this.matches(c));
    this.body.replaceChildren(...shown.map((c) => this.row(c)));
    const pending = this.conversations.some((c) => !this.details.has(c.id));
    this.count.textContent = `${shown.length} of ${this.conversations.length} loaded` + (pending ? " (still reading words and badges…)" : "");
  }

  row(conversation) {
    const row = element("tr");
    row.dataset.conversation = conversation.id;
    row.dataset.status = conversation.status;
    const details = this.details.get(conversation.id);
    const first = element("td", "conversation-cell");
    const title = element("div", "conversation-title");
    title.append(element("code", "", conversation.id), ...badges(details));
    const preview = element("div", "conversation-preview muted", details ? (details.preview || "no words") : "…");
    first.append(title, preview);
    const active = (conversation.speakers || []).filter((s) => s.merged_into == null);
    const words = conversation.unlabelled_word_count
      ? `${conversation.word_count} (${conversation.unlabelled_word_count} unlabelled)` : String(conversation.word_count);
    const cells = [conversation.device_id, conversation.provider, null, words, String(active.length),
      `${conversation.audio_seconds.toFixed(1)} s`, (conversation.ended_at ?? conversation.started_at ?? "").replace("T", " ").slice(0, 19)];
    row.append(first, ...cells.map((text, index) => {
      const cell = element("td");
      if (index === 2) cell.append(element("span", `status status-${conversation.status}`, conversation.status));
      else cell.textContent = text;
      return cell;
    }));
    row.onclick = () => this.open(conversation.id);
    return row;
  }

  request(id) {
    if (this.details.has(id) || this.queue.includes(id)) return;
    this.queue.push(id);
    this.pump();
  }

  pump() {
    while (this.running < concurrency && this.queue.length) {
      const id = this.queue.shift();
      this.running += 1;
      this.fetchDetails(id).then((details) => {
        this.details.set(id, details);
      }).finally(() => {
        this.running -= 1;
        this.render();
        this.pump();
      });
    }
  }

  /// The opening words, the labellings and whether audio was kept; what fails is left out, not fatal.
  async fetchDetails(id) {
    const path = `/v1/conversations/${encodeURIComponent(id)}`;
    const [text, labellings, audio] = await Promise.all([
      api.text(`${path}/transcript?format=text`).catch(() => ""),
      api.get(`${path}/labellings`).then((l) => l.labellings).catch(() => []),
      api.exists(`${path}/audio?format=wav`).catch(() => false),
    ]);
    // The text format puts "Speaker: words" per line; the preview reads as one line.
    const flat = text.replace(/\s+/g, " ").trim();
    return { preview: flat.length > previewCharacters ? flat.slice(0, previewCharacters) + "…" : flat, labellings, audio };
  }

  /// The cached details are stale once a conversation changes (a rename, a re-diarization).
  forget(id) { this.details.delete(id); this.request(id); }
}

/// Badges for what a conversation offers: stored audio, and each kind of extra labelling.
function badges(details) {
  if (!details) return [];
  const list = [];
  if (details.audio) list.push(["audio", "stored audio"]);
  const bySource = (source) => details.labellings.filter((l) => l.source === source).length;
  const shadows = bySource("shadow"), rediarized = bySource("rediarized"), references = bySource("reference");
  if (shadows) list.push(["shadow", shadows === 1 ? "1 shadow" : `${shadows} shadows`]);
  if (rediarized) list.push(["rediarized", "re-diarized"]);
  if (references) list.push(["reference", references === 1 ? "reference" : `${references} references`]);
  return list.map(([kind, text]) => {
    const badge = element("span", `tag tag-${kind}`, text);
    badge.dataset.badge = kind;
    return badge;
  });
}
