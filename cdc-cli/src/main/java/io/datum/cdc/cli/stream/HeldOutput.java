package io.datum.cdc.cli.stream;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * An output stream that holds every byte until {@link #flush}, then writes them to its target at
 * line ends, in writes of at most {@value #ATOMIC} bytes where the lines allow: the target (stdout)
 * only ever receives whole lines, even when the process is killed between or during writes. A write
 * of at most {@code PIPE_BUF} bytes (4,096 on Linux) to a pipe is all or nothing (POSIX {@code
 * write(2)}); a {@link java.io.BufferedOutputStream} writes out a full buffer on its own, mid-line,
 * and one large write to a pipe can be cut short by a kill. A line longer than {@value #ATOMIC}
 * bytes is written alone. Not thread-safe.
 */
final class HeldOutput extends OutputStream {
  /** The largest write that is all or nothing on a Linux pipe ({@code PIPE_BUF}). */
  static final int ATOMIC = 4096;

  private final OutputStream target;
  private byte[] buf = new byte[1 << 16];
  private int count;

  /**
   * @param target where {@link #flush} writes the held bytes
   */
  HeldOutput(OutputStream target) {
    this.target = target;
  }

  /** Returns the number of bytes held, not yet written to the target. */
  int held() {
    return count;
  }

  @Override
  public void write(int b) {
    ensure(1);
    buf[count++] = (byte) b;
  }

  @Override
  public void write(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, count, len);
    count += len;
  }

  private void ensure(int more) {
    if (count + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, count + more));
    }
  }

  /**
   * Writes the held bytes to the target and flushes it.
   *
   * @throws IOException if the target fails (the bytes are dropped: they may be partly written)
   */
  @Override
  public void flush() throws IOException {
    int n = count;
    count = 0;
    int start = 0;
    while (start < n) {
      int end = Math.min(n, start + ATOMIC);
      if (end < n) {
        int lastLineEnd = end - 1;
        while (lastLineEnd >= start && buf[lastLineEnd] != '\n') {
          lastLineEnd--;
        }
        if (lastLineEnd >= start) {
          end = lastLineEnd + 1;
        } else {
          // one line longer than ATOMIC: written alone, up to its end
          while (end < n && buf[end - 1] != '\n') {
            end++;
          }
        }
      }
      target.write(buf, start, end - start);
      start = end;
    }
    target.flush();
    if (buf.length > 1 << 20) {
      buf = new byte[1 << 16]; // a burst of large lines: do not keep their buffer
    }
  }

  @Override
  public void close() throws IOException {
    flush();
    target.close();
  }
}
