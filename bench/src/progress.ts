/**
 * A progress bar on stderr: redrawn in place on a terminal, a line every 10% otherwise (CI logs).
 */
export class Progress {
  private done = 0;
  private lastDraw = 0;
  private lastDecile = -1;
  private readonly started = Date.now();

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {
    this.draw(true);
  }

  tick(n: number): void {
    this.done = Math.min(this.total, this.done + n);
    this.draw(this.done === this.total);
  }

  finish(): void {
    const already = this.done === this.total;
    this.done = this.total;
    if (!already || process.stderr.isTTY) this.draw(true);
    if (process.stderr.isTTY) process.stderr.write('\n');
  }

  private draw(force: boolean): void {
    const now = Date.now();
    const fraction = this.total === 0 ? 1 : this.done / this.total;
    const seconds = ((now - this.started) / 1000).toFixed(1);
    if (process.stderr.isTTY) {
      if (!force && now - this.lastDraw < 150) return;
      this.lastDraw = now;
      const width = 30;
      const filled = Math.round(fraction * width);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      process.stderr.write(
        `\r${this.label.padEnd(28)} [${bar}] ${(fraction * 100).toFixed(0).padStart(3)}% ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${seconds}s`,
      );
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile === this.lastDecile && !force) return;
    if (decile === this.lastDecile && this.done !== this.total) return;
    this.lastDecile = decile;
    process.stderr.write(
      `${this.label}: ${(fraction * 100).toFixed(0)}% (${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')}) ${seconds}s\n`,
    );
  }
}
