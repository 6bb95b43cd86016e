// The headless Chromium every browser test drives: Debian's, with the flags CI runs it with.
import { chromium, type Browser, type Page } from 'playwright-core';

/** Launches Chromium at `executablePath` and opens one page of a laptop's size, 15 s per action. */
export async function openPage(executablePath: string): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const page = await browser.newPage({ viewport: { width: 1024, height: 900 } });
  page.setDefaultTimeout(15_000);
  return { browser, page };
}

/** Opens `url` on `page`, which sends the browser to sign in; signs in and waits for `landing`. */
export async function signIn(
  page: Page,
  url: string,
  email: string,
  password: string,
  landing: string,
): Promise<void> {
  await page.goto(url);
  await page.waitForURL('**/sign-in?next=*');
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: 'Sign in' }).click()]);
}
