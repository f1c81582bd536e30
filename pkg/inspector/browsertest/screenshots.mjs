// Regenerates the docs' screenshots of the run inspector (make inspector-screenshots): the
// runs list and a run page at 1280 px, on the example app with a few runs.
import { KEY, WAIT, startServer, stopServer, launchBrowser, api, waitForText } from "./harness.mjs";

const out = process.argv[2] || "docs";
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
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT);
  await page.setViewport({ width: 1280, height: 760 });
  await page.goto(`${server.base}/inspector?code=${KEY}#/run/refund-1042`);
  await waitForText(page, ".facts", "Waiting for approval");
  await page.evaluate(() => { document.querySelector("#event-payload").value = '{"approved": true, "reviewer": "ann"}'; });
  await page.click("#event-form button[type=submit]");
  await waitForText(page, ".facts .status", "Completed");
  await page.click('button.step[data-seq="6"]');
  await waitForText(page, ".step-detail", "Step #6");
  await page.evaluate(() => { document.activeElement.blur(); document.getElementById("notice").textContent = ""; window.scrollTo(0, 0); });
  await page.setViewport({ width: 1280, height: 1500 });
  await page.screenshot({ path: `${out}/inspector-run.png` });
  await page.setViewport({ width: 1280, height: 640 });
  await page.goto(`${server.base}/inspector?code=${KEY}#/`);
  await waitForText(page, "#runs-summary", "5 runs shown");
  await page.screenshot({ path: `${out}/inspector-runs.png` });
  console.log(`wrote ${out}/inspector-runs.png and ${out}/inspector-run.png`);
} finally {
  await browser.close();
  await stopServer(server);
}
