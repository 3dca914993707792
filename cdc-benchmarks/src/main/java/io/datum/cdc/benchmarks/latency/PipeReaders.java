package io.datum.cdc.benchmarks.latency;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Readers of the consumers whose output comes through a pipe to the harness ({@code pgcdc stream}'s
 * JSON lines, {@code pg_recvlogical}'s raw pgoutput): a change's arrival is when the read that
 * brought its bytes returned, as for a program reading the pipe.
 */
final class PipeReaders {
  private PipeReaders() {}

  /** An input stream that notes when its last read returned. */
  private static final class Timed extends FilterInputStream {
    long lastReadMicros;

    Timed(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      lastReadMicros = Latencies.nowMicros();
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      lastReadMicros = Latencies.nowMicros();
      return n;
    }
  }

  private static final byte[] COMMIT_TIME = "\"commit_time\":\"".getBytes(StandardCharsets.UTF_8);
  private static final byte[] INSERT = "{\"op\":\"insert\"".getBytes(StandardCharsets.UTF_8);
  private static final byte[] END_PAYLOAD =
      ("\"payload\":\"" + ChildProtocol.END + "\"").getBytes(StandardCharsets.UTF_8);

  /**
   * Reads {@code pgcdc stream}'s JSON lines until the END row: each insert's {@code commit_time}
   * against its arrival (the return of the read that brought the line's end). Lines are scanned as
   * bytes, without decoding them, so that the reader keeps up with the pipe.
   *
   * @param in the pipe
   * @param latencies where the latencies go
   * @return true once the END row came, false if the pipe ended first
   * @throws IOException if reading fails
   */
  static boolean jsonLines(InputStream in, Latencies latencies) throws IOException {
    byte[] buf = new byte[1 << 20];
    int start = 0;
    int end = 0;
    while (true) {
      if (end == buf.length) {
        if (start == 0) {
          buf = java.util.Arrays.copyOf(buf, buf.length * 2);
        } else {
          System.arraycopy(buf, start, buf, 0, end - start);
          end -= start;
          start = 0;
        }
      }
      int n = in.read(buf, end, buf.length - end);
      long arrival = Latencies.nowMicros();
      if (n < 0) {
        return false;
      }
      int scanFrom = end;
      end += n;
      for (int i = scanFrom; i < end; i++) {
        if (buf[i] != '\n') {
          continue;
        }
        if (startsWith(buf, start, i, INSERT)) {
          if (indexOf(buf, start, i, END_PAYLOAD) >= 0) {
            return true;
          }
          int at = indexOf(buf, start, i, COMMIT_TIME);
          if (at >= 0) {
            latencies.record(commitMicros(buf, at + COMMIT_TIME.length), arrival);
          }
        }
        start = i + 1;
      }
    }
  }

  private static boolean startsWith(byte[] b, int from, int to, byte[] prefix) {
    if (to - from < prefix.length) {
      return false;
    }
    for (int k = 0; k < prefix.length; k++) {
      if (b[from + k] != prefix[k]) {
        return false;
      }
    }
    return true;
  }

  private static int indexOf(byte[] b, int from, int to, byte[] what) {
    outer:
    for (int i = from; i <= to - what.length; i++) {
      for (int k = 0; k < what.length; k++) {
        if (b[i + k] != what[k]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /**
   * Parses {@code 2026-11-30T10:18:40.123456Z} (fraction optional, 0 to 9 digits) at {@code at}.
   */
  private static long commitMicros(byte[] b, int at) {
    int q = at;
    while (b[q] != '"') {
      q++;
    }
    return Latencies.micros(Instant.parse(new String(b, at, q - at, StandardCharsets.US_ASCII)));
  }

  /**
   * Reads {@code pg_recvlogical}'s output of a pgoutput slot (protocol version 1, no streaming):
   * each message followed by a newline (pg_recvlogical.c writes one after every message). Each
   * Insert's latency is its transaction's Begin commit time against its arrival. Message layouts:
   * PostgreSQL docs, "Logical Replication Message Formats".
   *
   * @param in the pipe
   * @param latencies where the latencies go
   * @return true once the END row came, false if the pipe ended first
   * @throws IOException if reading fails or a message is not one of Begin, Commit, Relation, Type,
   *     Origin or Insert
   */
  static boolean pgoutput(InputStream in, Latencies latencies) throws IOException {
    Timed timed = new Timed(in);
    DataInputStream d = new DataInputStream(new BufferedInputStream(timed, 1 << 16));
    long commit = 0;
    try {
      while (true) {
        int type = d.readUnsignedByte();
        switch (type) {
          case 'B' -> {
            d.readLong(); // final LSN
            commit = d.readLong() + Latencies.PG_EPOCH_MICROS;
            d.readInt(); // xid
          }
          case 'C' -> d.skipNBytes(1 + 8 + 8 + 8);
          case 'O' -> {
            d.readLong();
            cstring(d);
          }
          case 'Y' -> {
            d.readInt();
            cstring(d);
            cstring(d);
          }
          case 'R' -> {
            d.readInt();
            cstring(d);
            cstring(d);
            d.readUnsignedByte();
            int columns = d.readUnsignedShort();
            for (int i = 0; i < columns; i++) {
              d.readUnsignedByte();
              cstring(d);
              d.readInt();
              d.readInt();
            }
          }
          case 'I' -> {
            d.readInt(); // relation
            d.readUnsignedByte(); // 'N'
            int columns = d.readUnsignedShort();
            String last = null;
            for (int i = 0; i < columns; i++) {
              int kind = d.readUnsignedByte();
              if (kind == 't' || kind == 'b') {
                byte[] value = new byte[d.readInt()];
                d.readFully(value);
                last = new String(value, StandardCharsets.UTF_8);
              }
            }
            if (ChildProtocol.END.equals(last)) {
              return true;
            }
            latencies.record(commit, timed.lastReadMicros);
          }
          default -> throw new IOException("unexpected pgoutput message '" + (char) type + "'");
        }
        if (d.readUnsignedByte() != '\n') {
          throw new IOException("no newline after a pgoutput message");
        }
      }
    } catch (EOFException e) {
      return false;
    }
  }

  private static void cstring(DataInputStream d) throws IOException {
    while (d.readUnsignedByte() != 0) {
      // skip
    }
  }
}
