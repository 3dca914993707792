package io.datum.cdc.benchmarks.latency;

import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;

/**
 * Commit-to-arrival latencies of one consumer, recorded by one thread: for each change, its
 * transaction's commit time (pgoutput's Begin, PostgreSQL's clock) and when the consumer had it
 * (this machine's clock; the server runs on the same machine). {@link #summarize} gives the
 * percentiles of the changes committed within a window, and whether the consumer kept up there.
 */
public final class Latencies {

  /** The microseconds from the Unix epoch to PostgreSQL's epoch, 2000-01-01 UTC. */
  public static final long PG_EPOCH_MICROS = 946_684_800_000_000L;

  private long[] commit = new long[1 << 16];
  private long[] latency = new long[1 << 16];
  private int size;
  private long total;

  /**
   * Returns the time now in microseconds since the Unix epoch ({@link Instant#now()}, microsecond
   * resolution on Linux).
   *
   * @return the time now
   */
  public static long nowMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
  }

  /**
   * Converts an instant to microseconds since the Unix epoch.
   *
   * @param t an instant, not null
   * @return its microseconds
   */
  public static long micros(Instant t) {
    return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
  }

  /**
   * Records one change.
   *
   * @param commitMicros its transaction's commit time, microseconds since the Unix epoch
   * @param arrivalMicros when the consumer had it, microseconds since the Unix epoch
   */
  public void record(long commitMicros, long arrivalMicros) {
    if (size == commit.length) {
      commit = Arrays.copyOf(commit, size * 2);
      latency = Arrays.copyOf(latency, size * 2);
    }
    commit[size] = commitMicros;
    latency[size] = arrivalMicros - commitMicros;
    size++;
    total++;
  }

  /**
   * Writes every recorded change as a line {@code <commit micros> <latency micros>}, for a look at
   * latency over time.
   *
   * @param file the file to write
   * @throws java.io.IOException if writing fails
   */
  public void dump(java.nio.file.Path file) throws java.io.IOException {
    try (java.io.PrintWriter w =
        new java.io.PrintWriter(java.nio.file.Files.newBufferedWriter(file))) {
      for (int i = 0; i < size; i++) {
        w.println(commit[i] + " " + latency[i]);
      }
    }
  }

  /** Returns the number of changes recorded. */
  public long total() {
    return total;
  }

  /**
   * The latencies of the changes committed in {@code [fromMicros, toMicros)}.
   *
   * @param fromMicros the window's start, microseconds since the Unix epoch
   * @param toMicros the window's end
   * @return the summary; its count is 0 if no change was committed in the window
   */
  public Summary summarize(long fromMicros, long toMicros) {
    int n = 0;
    long[] in = new long[size];
    long span = Math.max(1, toMicros - fromMicros);
    long[] first = new long[size];
    long[] last = new long[size];
    int nf = 0, nl = 0;
    for (int i = 0; i < size; i++) {
      long c = commit[i];
      if (c < fromMicros || c >= toMicros) {
        continue;
      }
      in[n++] = latency[i];
      if (c < fromMicros + span / 10) {
        first[nf++] = latency[i];
      } else if (c >= toMicros - span / 10) {
        last[nl++] = latency[i];
      }
    }
    if (n == 0) {
      return new Summary(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    Arrays.sort(in, 0, n);
    Arrays.sort(first, 0, nf);
    Arrays.sort(last, 0, nl);
    return new Summary(
        n,
        ms(quantile(in, n, 0.5)),
        ms(quantile(in, n, 0.99)),
        ms(quantile(in, n, 0.999)),
        ms(in[n - 1]),
        nf == 0 ? Double.NaN : ms(quantile(first, nf, 0.5)),
        nl == 0 ? Double.NaN : ms(quantile(last, nl, 0.5)));
  }

  private static long quantile(long[] sorted, int n, double q) {
    int i = (int) Math.ceil(q * n) - 1;
    return sorted[Math.max(0, Math.min(n - 1, i))];
  }

  private static double ms(long micros) {
    return micros / 1000.0;
  }

  /**
   * The latencies of one window, in milliseconds.
   *
   * @param count the changes committed in the window
   * @param p50 the median
   * @param p99 the 99th percentile
   * @param p999 the 99.9th percentile
   * @param max the largest
   * @param firstP50 the median of the changes of the window's first tenth (by commit time)
   * @param lastP50 the median of its last tenth
   */
  public record Summary(
      long count,
      double p50,
      double p99,
      double p999,
      double max,
      double firstP50,
      double lastP50) {

    /**
     * Whether the consumer kept up: the median of the window's last tenth is within 2 times, or 20
     * ms, of its first tenth's (its lag did not grow), and below one second (it had not fallen
     * behind already before the window).
     *
     * @return true if it kept up
     */
    public boolean keptUp() {
      return count > 0 && lastP50 < 1000 && (lastP50 <= 2 * firstP50 || lastP50 <= firstP50 + 20);
    }

    /**
     * Returns the summary as {@code key=value} words, for a child's result line.
     *
     * @return the words
     */
    public String words() {
      return String.format(
          Locale.ROOT,
          "count=%d p50=%.3f p99=%.3f p999=%.3f max=%.3f firstP50=%.3f lastP50=%.3f",
          count,
          p50,
          p99,
          p999,
          max,
          firstP50,
          lastP50);
    }

    /**
     * Parses {@link #words()}.
     *
     * @param words the words, in any order, among others
     * @return the summary
     */
    public static Summary parse(String words) {
      java.util.Map<String, String> kv = new java.util.HashMap<>();
      for (String w : words.trim().split("\\s+")) {
        int eq = w.indexOf('=');
        if (eq > 0) {
          kv.put(w.substring(0, eq), w.substring(eq + 1));
        }
      }
      return new Summary(
          Long.parseLong(kv.get("count")),
          Double.parseDouble(kv.get("p50")),
          Double.parseDouble(kv.get("p99")),
          Double.parseDouble(kv.get("p999")),
          Double.parseDouble(kv.get("max")),
          Double.parseDouble(kv.get("firstP50")),
          Double.parseDouble(kv.get("lastP50")));
    }
  }
}
