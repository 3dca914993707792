package io.datum.cdc.cli.stream;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * An output stream that holds every byte until {@link #flush}, then writes them to its target in
 * one call: flushed at line ends, the target (stdout) only ever receives whole lines, even when the
 * process is killed between two flushes (a {@link java.io.BufferedOutputStream} writes out a full
 * buffer on its own, mid-line). Not thread-safe.
 */
final class HeldOutput extends OutputStream {
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
    if (n > 0) {
      target.write(buf, 0, n);
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
