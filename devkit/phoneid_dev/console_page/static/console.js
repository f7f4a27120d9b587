// The local stack's console: polls /_local/console/feed once a second and redraws its panels.
// Everything is built with the DOM (textContent), so nothing the feed holds is read as markup.
"use strict";

const POLL_MS = 1000;
const MAX_ROWS = 500;
const SVG = "http://www.w3.org/2000/svg";

let lastSeq = 0;
const requests = []; // oldest first, at most MAX_ROWS
let reasonText = {};

function element(tag, text, className) {
  const made = document.createElement(tag);
  if (text !== undefined && text !== null) made.textContent = String(text);
  if (className) made.className = className;
  return made;
}

function time(iso) {
  return iso ? iso.replace("T", " ").replace(/\+00:00$|Z$/, "") : "";
}

function show(list, emptyNote, children) {
  list.replaceChildren(...children);
  document.getElementById(emptyNote).hidden = children.length > 0;
}

function reasonLabel(code) {
  return reasonText[code] ? `${code} ${reasonText[code]}` : String(code);
}

function renderRequests(fresh) {
  requests.push(...fresh);
  requests.splice(0, Math.max(0, requests.length - MAX_ROWS));
  const rows = requests
    .slice()
    .reverse()
    .map((request) => {
      const row = element("tr", null, request.status >= 400 ? "error" : "ok");
      const cells = [
        time(request.at),
        request.method,
        request.route,
        request.clientId ?? "—",
        request.status,
        request.code ?? "",
        `${request.ms} ms`,
      ];
      const classes = ["at", "method", "route", "client", "status", "code", "ms"];
      cells.forEach((value, index) => row.append(element("td", value, classes[index])));
      return row;
    });
  document.querySelector("#requests tbody").replaceChildren(...rows);
  document.getElementById("requests-count").textContent = `(latest ${requests.length})`;
}

function stepItem(step) {
  let label = step.step;
  if (step.code) label += ` ${step.status}/${step.code}`;
  else if (step.success === true) label += " ✔";
  else if (step.success === false) label += " ✘";
  else if (step.success === "pending") label += " …";
  const className = step.success === false || step.code ? "failed" : step.success === true ? "passed" : "";
  return element("li", label, className);
}

function renderFlows(flows) {
  const cards = flows.map((flow) => {
    const card = element("div", null, "flow");
    card.dataset.correlationId = flow.correlationId;
    const title = element("div", null, "title");
    title.append(element("code", flow.correlationId));
    title.append(element("span", `${flow.api}${flow.clientId ? `, client ${flow.clientId}` : ""}`, "muted"));
    title.append(element("span", time(flow.startedAt), "muted"));
    const outcome = flow.outcome ?? "in progress";
    title.append(element("span", outcome, `badge outcome ${flow.outcome ?? ""}`));
    const steps = element("ol", null, "steps");
    steps.append(...flow.steps.map(stepItem));
    card.append(title, steps);
    const categories = Object.entries(flow.evaluation ?? {});
    if (categories.length) {
      const evaluation = element("p", null, "evaluation");
      evaluation.textContent = categories.map(([name, kept]) => `${name}: ${kept.result ?? "?"}`).join(" · ");
      card.append(evaluation);
    }
    if (flow.reasons.length) {
      const reasons = element("ul", null, "reasons");
      reasons.append(...flow.reasons.map((code) => element("li", reasonLabel(code))));
      card.append(reasons);
    }
    return card;
  });
  show(document.getElementById("flows"), "flows-empty", cards);
}

function renderMessages(messages) {
  const items = messages.map((message) => {
    const item = element("li");
    const head = element("div");
    head.append(element("strong", `${message.via === "email" ? "Email" : "SMS"} to ${message.to}`));
    head.append(" ", element("span", time(message.at), "muted"));
    item.append(head);
    if (message.subject) item.append(element("div", message.subject));
    item.append(element("div", message.text, "text"));
    return item;
  });
  show(document.getElementById("messages"), "messages-empty", items);
}

function renderBatches(batches) {
  const items = batches.map((batch) => {
    const item = element("li", null, "batch");
    item.dataset.batchId = batch.batchId;
    const head = element("div");
    head.append(element("strong", batch.file), " ", element("span", `${batch.client} · ${batch.state}`, "muted"));
    const bar = element("progress");
    bar.max = 1;
    bar.value = batch.progress;
    bar.title = `${Math.round(batch.progress * 100)} %`;
    const counts = element(
      "div",
      `${batch.done} of ${batch.rows} rows done · ${batch.passed} passed · ${batch.failed} failed` +
        (batch.state === "verifying" ? ` (chunk ${batch.chunksDone} of ${batch.chunks})` : ""),
      "counts",
    );
    item.append(head, bar, counts);
    if (batch.reason) item.append(element("div", `reason: ${batch.reason}`, "muted"));
    return item;
  });
  show(document.getElementById("batches"), "batches-empty", items);
}

function renderWebhooks(deliveries) {
  const items = deliveries.map((delivery) => {
    const item = element("li", null, "delivery");
    const head = element("div");
    head.append(element("strong", delivery.event), " ", element("span", delivery.outcome, `badge ${delivery.outcome === "settled" ? "pass" : "fail"}`));
    const where = element("div", `${delivery.endpoint ?? "no webhook"} · client ${delivery.clientId} · ${delivery.phone}`, "muted");
    const attempts = element("ol", null, "attempts");
    attempts.append(
      ...delivery.attempts.map((attempt) =>
        element(
          "li",
          `attempt ${attempt.attempt}: ${attempt.outcome} at ${time(attempt.at)}` +
            (attempt.nextRetry ? `, next retry ${time(attempt.nextRetry)}` : ""),
        ),
      ),
    );
    item.append(head, where, attempts);
    return item;
  });
  show(document.getElementById("webhooks"), "webhooks-empty", items);
}

function svg(tag, attributes, text) {
  const made = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = String(text);
  return made;
}

// One bar for the passes and one per failure reason code: API flows and Connect rows of the day.
function renderToday(today) {
  const connect = today.connect ?? { passed: 0, failed: 0, byReason: {} };
  const byReason = { ...today.byReason };
  for (const [code, n] of Object.entries(connect.byReason)) byReason[code] = (byReason[code] ?? 0) + n;
  const passed = today.passed + connect.passed;
  const failed = today.failed + connect.failed;
  document.getElementById("today-date").textContent = today.date;
  document.getElementById("today-summary").textContent =
    `${passed} passed, ${failed} failed (API flows: ${today.passed} passed, ${today.failed} failed; ` +
    `Connect rows: ${connect.passed} passed, ${connect.failed} failed)`;
  const bars = [{ label: "passed", count: passed, kind: "pass" }];
  for (const [code, count] of Object.entries(byReason)) bars.push({ label: reasonLabel(code), code, count, kind: "fail" });
  const unexplained = failed - Object.values(byReason).reduce((sum, n) => sum + n, 0);
  if (unexplained > 0) bars.push({ label: "failed, no reason code", count: unexplained, kind: "fail" });
  const shown = bars.filter((bar) => bar.count > 0);
  const chart = document.getElementById("chart");
  const most = Math.max(1, ...shown.map((bar) => bar.count));
  const rowHeight = 22;
  const labelWidth = 300;
  const barWidth = 300;
  chart.setAttribute("viewBox", `0 0 ${labelWidth + barWidth + 60} ${Math.max(1, shown.length) * rowHeight}`);
  chart.replaceChildren(
    ...shown.map((bar, index) => {
      const group = svg("g", { class: `bar ${bar.kind}`, "data-label": bar.code ?? bar.label, transform: `translate(0 ${index * rowHeight})` });
      const width = Math.max(2, Math.round((bar.count / most) * barWidth));
      group.append(
        svg("text", { x: 0, y: 15 }, bar.label.length > 44 ? `${bar.label.slice(0, 43)}…` : bar.label),
        svg("rect", { class: bar.kind, x: labelWidth, y: 3, width, height: 16, rx: 3 }),
        svg("text", { class: "count", x: labelWidth + width + 6, y: 15 }, bar.count),
      );
      return group;
    }),
  );
  chart.hidden = shown.length === 0;
  document.getElementById("chart-empty").hidden = shown.length > 0;
}

function live(on) {
  const badge = document.getElementById("live");
  badge.textContent = on ? "live" : "the stack does not answer; retrying";
  badge.className = `live ${on ? "on" : "off"}`;
}

async function poll() {
  try {
    const answer = await fetch(`/_local/console/feed?after=${lastSeq}`, { cache: "no-store" });
    if (!answer.ok) throw new Error(String(answer.status));
    const feed = await answer.json();
    reasonText = feed.reasonText ?? reasonText;
    renderRequests(feed.requests);
    if (feed.requests.length) lastSeq = feed.requests.at(-1).seq;
    renderFlows(feed.flows);
    renderMessages(feed.messages);
    renderBatches(feed.batches);
    renderWebhooks(feed.webhooks);
    renderToday(feed.today);
    live(true);
  } catch {
    live(false);
  }
  setTimeout(poll, POLL_MS);
}

poll();
