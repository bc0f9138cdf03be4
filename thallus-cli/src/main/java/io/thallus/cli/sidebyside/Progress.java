package io.thallus.cli.sidebyside;

import java.io.PrintStream;

/**
 * A one-line progress bar on a terminal; on anything else (a log, a pipe) a line at each quarter, so captured
 * output stays readable.
 */
public final class Progress implements AutoCloseable {
  private static final int WIDTH = 30;
  private final PrintStream out;
  private final String label;
  private final long total;
  private final boolean terminal;
  private long done;
  private int lastShown = -1;

  public Progress(PrintStream out, String label, long total) {
    this.out = out;
    this.label = label;
    this.total = Math.max(1, total);
    this.terminal = System.console() != null;
    show();
  }

  public void advance(long amount) {
    done += amount;
    show();
  }

  private void show() {
    int percent = (int) Math.min(100, done * 100 / total);
    if (terminal) {
      if (percent == lastShown) {
        return;
      }
      int filled = percent * WIDTH / 100;
      out.print("\r  " + label + " [" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] " + percent + "%");
      out.flush();
    } else if (percent / 25 != lastShown / 25 || lastShown < 0) {
      out.println("  " + label + " " + percent + "%");
    }
    lastShown = percent;
  }

  @Override
  public void close() {
    if (terminal) {
      out.print("\r" + " ".repeat(label.length() + WIDTH + 12) + "\r");
      out.flush();
    }
  }
}
