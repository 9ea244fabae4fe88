/** Moves to another page of the dashboard without reloading it; App listens for popstate. */
export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}
