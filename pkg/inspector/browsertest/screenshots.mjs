// Regenerates the docs' screenshots of the run inspector (make inspector-screenshots): the
// runs list and a run page at 1280 px, and the drawings of two agent graphs (research_agent
// waiting for its second review, triage waiting with its child run done), on the test app.
import { KEY, WAIT, startServer, stopServer, launchBrowser, api, waitForText } from "./harness.mjs";

const out = process.argv[2] || "docs";

// shoot saves the element matching selector, the focus and the notice cleared first.
async function shoot(page, selector, path) {
  await page.evaluate(() => { document.activeElement.blur(); document.getElementById("notice").textContent = ""; });
  const el = await page.$(selector);
  await el.screenshot({ path });
}
const server = await startServer();
const browser = await launchBrowser();
try {
  const start = async (graph, id, input) => {
    const res = await api(server.base, "POST", `graphs/${graph}/runs`, { instance_id: id, input });
    if (res.status !== 202) throw new Error(`start ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  await start("data_pipeline", "nightly-import", { source_url: "https://example.com/data.csv" });
  await start("content_classifier", "ticket-311", { text: "The app crashes when I upload a file" });
  await start("support_agent", "refund-1042", { user_message: "I want a refund for invoice 1042" });
  await start("support_agent", "question-7", { user_message: "How do I change my address?" });
  await start("support_agent", "legal-88", { user_message: "A legal question about my contract" });
  await start("research_agent", "research-17", { question: "Which layout library should the inspector use?", sources: ["docs", "issues", "benchmarks"] });
  await start("triage", "ticket-5120", { ticket: "The app crashes when I upload a file", sources: ["kb", "crm", "logs"] });
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT);
  await page.setViewport({ width: 1280, height: 760 });
  await page.goto(`${server.base}/inspector?code=${KEY}#/run/refund-1042`);
  await waitForText(page, ".facts", "Waiting for approval");
  await page.evaluate(() => { document.querySelector("#event-payload").value = '{"approved": true, "reviewer": "ann"}'; });
  await page.click("#event-form button[type=submit]");
  await waitForText(page, ".facts .status", "Completed");
  await page.waitForSelector('button.step[data-seq="6"]');
  await page.click('button.step[data-seq="6"]');
  await waitForText(page, ".step-detail", "Step #6");
  await page.evaluate(() => { document.activeElement.blur(); document.getElementById("notice").textContent = ""; window.scrollTo(0, 0); });
  await page.setViewport({ width: 1280, height: 1500 });
  await page.screenshot({ path: `${out}/inspector-run.png` });
  // research_agent: the first draft rejected, the second awaiting its review.
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${server.base}/inspector?code=${KEY}#/run/research-17`);
  await waitForText(page, 'g.node[data-node="draft"]', "‖ waiting: approval");
  const rejected = await api(server.base, "POST", "runs/research-17/events/approval", { approved: false, reviewer: "ann" });
  if (rejected.status !== 202) throw new Error(`reject research-17: ${rejected.status}`);
  await waitForText(page, 'g.node[data-node="draft"]', "visited ×2");
  await waitForText(page, 'g.node[data-node="draft"]', "‖ waiting: approval");
  await shoot(page, ".graph-panel", `${out}/inspector-agent.png`);
  // triage: its fan-out joined, its child run done, waiting for the approval until a deadline.
  await page.goto(`${server.base}/inspector?code=${KEY}#/run/ticket-5120`);
  await waitForText(page, 'g.node[data-node="decide"]', "‖ waiting: approval");
  await shoot(page, ".graph-panel", `${out}/inspector-child.png`);

  await page.setViewport({ width: 1280, height: 640 });
  await page.goto(`${server.base}/inspector?code=${KEY}#/`);
  await waitForText(page, "#runs-summary", "8 runs shown"); // the seven started and triage's child run
  await page.screenshot({ path: `${out}/inspector-runs.png` });
  console.log(`wrote ${out}/inspector-runs.png, inspector-run.png, inspector-agent.png and inspector-child.png`);
} finally {
  await browser.close();
  await stopServer(server);
}
