// The console's Decisions panel: a chosen client's decision records (its latest, or searched by
// number or id), one of them whole, and its summary charted. It reads /_local/console/clients and
// /_local/console/decisions/*, which answer as the API's /v3/decisions routes do for that client.
// A number typed in the search box is sent in a POST body to be looked up and kept nowhere else;
// records hold none (a number shows as its country and last two digits). Uses console.js's element,
// time, svg and reasonLabel (loaded before it).
"use strict";

const REFRESH_MS = 5000;
const decisions = {
  client: null, // the chosen client's id
  mode: "latest", // "latest", "number" or "id"
  number: null, // the number of a number search, to ask its next page (in memory only)
  lastKey: null,
  pages: 0, // pages of the list shown
  asked: 0, // the list's latest request: an answer to an earlier one is dropped
};
let lastView = null; // the decision open

function byId(id) {
  return document.getElementById(id);
}

async function ask(path, options = {}) {
  const answer = await fetch(path, { cache: "no-store", ...options });
  let body = {};
  try {
    body = await answer.json();
  } catch {
    // not JSON: the status says it
  }
  return { ok: answer.ok, status: answer.status, body };
}

// An API error as the API answered it: its status, code and message.
function refusal(answer) {
  const code = answer.body.code ? `/${answer.body.code}` : "";
  return `${answer.status}${code}: ${answer.body.message ?? "the stack did not answer"}`;
}

function showError(id, text) {
  const note = byId(id);
  note.textContent = text ?? "";
  note.hidden = !text;
}

function numberShown(number) {
  return number ? `${number.country} ••${number.lastTwo}` : "—";
}

// --- clients ---------------------------------------------------------------------------------------

async function loadClients() {
  const answer = await ask("/_local/console/clients");
  if (!answer.ok) return;
  const select = byId("decision-client");
  const clients = answer.body.clients;
  const ids = clients.map((client) => client.clientId).join(",");
  if (select.dataset.ids === ids) return;
  select.dataset.ids = ids;
  select.replaceChildren(
    ...clients.map((client) => {
      const option = element(
        "option",
        `${client.name || "(no name)"}${client.role ? ` (the stack's ${client.role} client)` : ""} · ${client.clientId} · ${client.solution}`,
      );
      option.value = client.clientId;
      return option;
    }),
  );
  const chosen = clients.find((client) => client.clientId === decisions.client) ??
    clients.find((client) => client.role === "demo") ?? clients[0];
  if (chosen) select.value = chosen.clientId;
  decisions.client = chosen?.clientId ?? null;
}

async function chooseClient(clientId) {
  decisions.client = clientId;
  byId("decision-view").hidden = true;
  showError("decision-error", null);
  await showLatest();
  await loadSummary();
}

// --- the list --------------------------------------------------------------------------------------

function decisionRow(item) {
  const row = element("tr", null, item.outcome);
  row.dataset.id = item.id;
  const open = element("button", item.id, "link");
  open.type = "button";
  open.addEventListener("click", () => openDecision(item.id));
  const id = element("td", null, "id");
  id.append(open);
  const reasons = [...(item.reasonCodes ?? []), ...(item.errorCode ? [item.errorCode] : [])];
  row.append(
    element("td", time(item.endedAt), "at"),
    element("td", item.kind, "kind"),
    element("td", item.flow ?? "", "flow-type"),
    element("td", numberShown(item.number), "number"),
    element("td", item.outcome, "outcome"),
    element("td", reasons.join(", "), "reasons"),
    id,
  );
  return row;
}

function showRows(items, append) {
  const body = document.querySelector("#decisions tbody");
  const rows = items.map(decisionRow);
  if (append) body.append(...rows);
  else body.replaceChildren(...rows);
  byId("decisions-more").hidden = !decisions.lastKey;
  byId("decisions-empty").hidden = body.children.length > 0;
}

async function listPage(append) {
  const search = { client: decisions.client };
  if (decisions.mode === "number") search.phoneNumber = decisions.number;
  if (append && decisions.lastKey) search.startKey = decisions.lastKey;
  const asked = ++decisions.asked;
  const answer = await ask("/_local/console/decisions/search", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(search),
  });
  if (asked !== decisions.asked) return;
  if (!answer.ok) {
    showError("decision-error", refusal(answer));
    decisions.lastKey = null;
    showRows([], false);
    byId("decisions-empty").hidden = true; // the error says why
    return;
  }
  showError("decision-error", null);
  decisions.lastKey = answer.body.lastKey ?? null;
  decisions.pages = append ? decisions.pages + 1 : 1;
  showRows(answer.body.results, append);
}

function showLatest() {
  decisions.mode = "latest";
  decisions.number = null;
  decisions.lastKey = null;
  decisions.pages = 0;
  byId("decisions-caption").textContent = "the latest decisions";
  return listPage(false);
}

async function search(event) {
  event.preventDefault();
  if (!decisions.client) return;
  const phone = byId("decision-phone").value.trim();
  const id = byId("decision-id").value.trim();
  if (phone && id) {
    showError("decision-error", "Search by a number or by an id, not both");
    return;
  }
  if (!phone && !id) {
    await showLatest();
    return;
  }
  if (id) {
    decisions.mode = "id";
    decisions.asked++;
    decisions.lastKey = null;
    byId("decisions-caption").textContent = "the decision with this id";
    if (await openDecision(id)) showRows([lastView], false);
    return;
  }
  decisions.mode = "number";
  decisions.number = phone;
  decisions.lastKey = null;
  byId("decisions-caption").textContent = "the decisions of the number searched";
  byId("decision-view").hidden = true;
  await listPage(false);
}

// --- one decision ----------------------------------------------------------------------------------

function facts(list, entries) {
  list.replaceChildren();
  for (const [name, value] of entries) {
    if (value === undefined || value === null) continue;
    list.append(element("dt", name), element("dd", typeof value === "object" ? JSON.stringify(value) : value));
  }
  return list;
}

function table(className, heads, rows) {
  const made = element("table", null, className);
  const head = element("tr");
  head.append(...heads.map((text) => element("th", text)));
  const thead = element("thead");
  thead.append(head);
  const body = element("tbody");
  for (const cells of rows) {
    const row = element("tr");
    row.append(...cells.map((text) => element("td", text)));
    body.append(row);
  }
  made.append(thead, body);
  return made;
}

const SHOWN = new Set([
  "id", "kind", "flow", "startedAt", "endedAt", "outcome", "success", "reasonCodes", "errorCode", "number", "tier",
  "region", "step", "clientRequestId", "evaluation", "monitoredCodes", "possession", "policy", "facts",
]);

function renderDecision(view) {
  const box = byId("decision-view");
  const title = element("h3");
  title.append(
    element("code", view.id),
    " ",
    element("span", view.outcome, `badge outcome ${view.outcome}`),
    " ",
    element("span", `${view.kind}${view.flow ? ` · ${view.flow}` : ""}`, "muted"),
  );
  const close = element("button", "Close", "close");
  close.type = "button";
  close.addEventListener("click", () => {
    box.hidden = true;
  });
  const parts = [title, close];
  const about = [
    ["success", String(view.success)],
    ["started", time(view.startedAt)],
    ["ended", time(view.endedAt)],
    ["tier", view.tier],
    ["region", view.region],
    ["step", view.step],
    ["number", view.number ? numberShown(view.number) : null],
    ["clientRequestId", view.clientRequestId],
    ["reason codes", view.reasonCodes?.map(reasonLabel).join("; ")],
    ["monitored codes", view.monitoredCodes?.map(reasonLabel).join("; ")],
    ["error code", view.errorCode],
  ];
  // A field the view gains later still shows, as it came.
  for (const [name, value] of Object.entries(view)) if (!SHOWN.has(name)) about.push([name, value]);
  parts.push(facts(element("dl", null, "about"), about));

  parts.push(element("h4", "Evaluation"));
  const categories = Object.entries(view.evaluation ?? {});
  parts.push(
    categories.length
      ? table("evaluation", ["Category", "Result", "Failure reasons"], categories.map(([name, result]) => [
          name,
          result.result,
          Object.entries(result.failureReasons ?? {}).map(([code, text]) => `${code} ${text}`).join("; "),
        ]))
      : element("p", "No evaluation (the decision was refused before one)", "muted"),
  );

  parts.push(element("h4", "Possession"));
  const possession = view.possession;
  parts.push(
    possession
      ? facts(element("dl", null, "possession"), [
          ["status", possession.status],
          ["method", possession.method ?? "—"],
          ["Mobile Auth", possession.mobileAuth],
          ["SMS sent", possession.smsSent],
          ["codes entered", possession.otpEntries],
          ["links sent", possession.linksSent],
          ["link opened", String(possession.linkOpened)],
          ["device key", possession.deviceKey ?? "—"],
        ])
      : element("p", "Not part of this decision", "muted"),
  );

  parts.push(element("h4", "Policy"));
  parts.push(
    view.policy
      ? facts(element("dl", null, "policy"), [
          ["id", view.policy.id],
          ["version", view.policy.version],
          ["hash", view.policy.hash],
        ])
      : element("p", "No policy decided it", "muted"),
  );

  parts.push(element("h4", "Facts"));
  parts.push(
    view.facts?.length
      ? table("facts", ["Signal", "Value", "Source", "As of"], view.facts.map((fact) => [
          fact.signal,
          JSON.stringify(fact.value),
          fact.source,
          time(fact.asOf),
        ]))
      : element("p", "No fact was evaluated", "muted"),
  );
  box.replaceChildren(...parts);
  box.dataset.id = view.id;
  box.hidden = false;
}

async function openDecision(id) {
  const answer = await ask(
    `/_local/console/decisions/one?client=${encodeURIComponent(decisions.client)}&id=${encodeURIComponent(id)}`,
  );
  if (!answer.ok) {
    showError("decision-error", refusal(answer));
    byId("decision-view").hidden = true;
    if (decisions.mode === "id") {
      showRows([], false);
      byId("decisions-empty").hidden = true; // the error says why
    }
    return false;
  }
  showError("decision-error", null);
  lastView = answer.body;
  renderDecision(answer.body);
  return true;
}

// --- the summary -----------------------------------------------------------------------------------

function dayList(first, last) {
  const days = [];
  for (let day = new Date(`${first}T00:00:00Z`); day <= new Date(`${last}T00:00:00Z`); day.setUTCDate(day.getUTCDate() + 1)) {
    days.push(day.toISOString().slice(0, 10));
  }
  return days;
}

// One column per day of the range: passes, failures and errors stacked.
function drawDays(summary) {
  const chart = byId("summary-days");
  const counted = Object.fromEntries(summary.byDay.map((day) => [day.day, day]));
  const days = dayList(summary.firstDay, summary.lastDay);
  const most = Math.max(1, ...summary.byDay.map((day) => day.total));
  const column = 18;
  const height = 120;
  const top = 16;
  chart.setAttribute("viewBox", `0 0 ${days.length * column + 10} ${top + height + 20}`);
  chart.replaceChildren(
    ...days.map((day, index) => {
      const counts = counted[day] ?? { total: 0, passed: 0, failed: 0, errors: 0 };
      const group = svg("g", { class: "day", "data-day": day, transform: `translate(${index * column} 0)` });
      let y = top + height;
      for (const [kind, n] of [["pass", counts.passed], ["fail", counts.failed], ["error", counts.errors]]) {
        if (!n) continue;
        const tall = Math.max(2, Math.round((n / most) * height));
        y -= tall;
        group.append(svg("rect", { class: kind, x: 2, y, width: column - 4, height: tall }));
      }
      if (counts.total) group.append(svg("text", { class: "count", x: column / 2, y: y - 3, "text-anchor": "middle" }, counts.total));
      if (index % 5 === 0 || index === days.length - 1) {
        group.append(svg("text", { x: column / 2, y: top + height + 14, "text-anchor": "middle" }, day.slice(8)));
      }
      group.append(svg("title", {}, `${day}: ${counts.total} (${counts.passed} passed, ${counts.failed} failed, ${counts.errors} errors)`));
      return group;
    }),
  );
}

// Horizontal bars, as the day's chart above draws them; the longest is `most` (else the largest count).
function drawBars(chart, bars, most = Math.max(1, ...bars.map((bar) => bar.count))) {
  const rowHeight = 22;
  const labelWidth = 300;
  const barWidth = 300;
  chart.setAttribute("viewBox", `0 0 ${labelWidth + barWidth + 140} ${Math.max(1, bars.length) * rowHeight}`);
  chart.replaceChildren(
    ...bars.map((bar, index) => {
      const group = svg("g", { class: `bar ${bar.kind}`, "data-label": bar.key, transform: `translate(0 ${index * rowHeight})` });
      const width = bar.count ? Math.max(2, Math.round((bar.count / most) * barWidth)) : 0;
      group.append(
        svg("title", {}, `${bar.label}: ${bar.text ?? bar.count}`),
        svg("text", { class: "label", x: 0, y: 15 }, bar.label.length > 44 ? `${bar.label.slice(0, 43)}…` : bar.label),
        svg("rect", { class: bar.kind, x: labelWidth, y: 3, width, height: 16, rx: 3 }),
        svg("text", { class: "count", x: labelWidth + width + 6, y: 15 }, bar.text ?? bar.count),
      );
      return group;
    }),
  );
  chart.hidden = bars.length === 0;
}

const CHANNELS = { sms: "SMS code", instantLink: "Instant Link", mobileAuth: "Mobile Auth" };

function renderSummary(summary) {
  const kinds = Object.entries(summary.byKind).map(([kind, n]) => `${kind} ${n}`).join(", ");
  byId("summary-range").textContent = `${summary.firstDay} to ${summary.lastDay}`;
  byId("summary-totals").textContent =
    `${summary.total} decisions: ${summary.passed} passed, ${summary.failed} failed, ${summary.errors} errors` +
    (kinds ? ` (${kinds})` : "");
  drawDays(summary);
  drawBars(
    byId("summary-reasons"),
    Object.entries(summary.byReasonCode).map(([code, count]) => ({ key: code, label: reasonLabel(code), count, kind: "fail" })),
  );
  byId("summary-reasons-empty").hidden = Object.keys(summary.byReasonCode).length > 0;
  drawBars(
    byId("summary-conversion"),
    Object.entries(summary.conversion).map(([channel, conversion]) => ({
      key: channel,
      label: `${CHANNELS[channel] ?? channel}: ${conversion.succeeded} of ${conversion.attempted}`,
      count: Math.round((conversion.rate ?? 0) * 100),
      text: conversion.rate === undefined || conversion.rate === null ? "none tried" : `${Math.round(conversion.rate * 100)} %`,
      kind: "pass",
    })),
    100,
  );
}

async function loadSummary(event) {
  event?.preventDefault();
  if (!decisions.client) return;
  const query = new URLSearchParams({ client: decisions.client });
  const first = byId("summary-from").value;
  const last = byId("summary-to").value;
  if (first) query.set("from", first);
  if (last) query.set("to", last);
  const answer = await ask(`/_local/console/decisions/summary?${query}`);
  if (!answer.ok) {
    showError("summary-error", refusal(answer));
    return;
  }
  showError("summary-error", null);
  renderSummary(answer.body);
}

// --- wiring ----------------------------------------------------------------------------------------

// The summary follows the stack, and so does the list while it shows the latest decisions' first
// page (not while the operator searches or reads further pages).
async function refresh() {
  try {
    await loadClients();
    if (decisions.client && decisions.mode === "latest" && decisions.pages <= 1) await listPage(false);
    if (decisions.client) await loadSummary();
  } catch {
    // the stack does not answer: the feed's badge says so
  }
  setTimeout(refresh, REFRESH_MS);
}

byId("decision-client").addEventListener("change", (event) => chooseClient(event.target.value));
byId("decision-search").addEventListener("submit", search);
byId("decision-latest").addEventListener("click", () => {
  byId("decision-phone").value = "";
  byId("decision-id").value = "";
  showLatest();
});
byId("decisions-more").addEventListener("click", () => listPage(true));
byId("summary-range-form").addEventListener("submit", loadSummary);
refresh();
