package io.datum.cdc.benchmarks.latency;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

/**
 * What a latency consumer in a child JVM shares with {@link LatencyHarness}: it reads the window
 * ({@code WINDOW <fromMicros> <toMicros>}) from standard input, and once it has the change whose
 * payload is {@value #END} (committed after the window) prints {@value #RESULT_PREFIX} and its
 * {@link Latencies.Summary} on standard output.
 */
public final class ChildProtocol {
  /** The payload of the row the harness inserts after the writer ended. */
  public static final String END = "END";

  /** The prefix of the result line. */
  public static final String RESULT_PREFIX = "LATENCY-RESULT ";

  private final CountDownLatch window = new CountDownLatch(1);
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long fromMicros;
  private volatile long toMicros;

  /** Starts reading the window from standard input (a daemon thread). */
  public ChildProtocol() {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String l; (l = in.readLine()) != null; ) {
                  String[] w = l.trim().split("\\s+");
                  if (w.length == 3 && w[0].equals("WINDOW")) {
                    fromMicros = Long.parseLong(w[1]);
                    toMicros = Long.parseLong(w[2]);
                    window.countDown();
                  }
                }
              } catch (IOException e) {
                System.err.println("reading the window: " + e);
              }
            },
            "latency-window");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Called by the consumer when it has the END row: prints the result of the window (waiting for
   * the window if it did not come yet; the harness sends it before inserting END).
   *
   * @param latencies what the consumer recorded
   * @throws InterruptedException if interrupted while waiting for the window
   */
  public void end(Latencies latencies) throws InterruptedException {
    window.await();
    Latencies.Summary s = latencies.summarize(fromMicros, toMicros);
    String raw = System.getProperty("latency.raw");
    if (raw != null) {
      try {
        latencies.dump(java.nio.file.Path.of(raw));
      } catch (IOException e) {
        System.err.println("writing " + raw + ": " + e);
      }
    }
    System.out.println(RESULT_PREFIX + s.words() + " total=" + latencies.total());
    System.out.flush();
    done.countDown();
  }

  /**
   * Waits until {@link #end} printed the result.
   *
   * @throws InterruptedException if interrupted
   */
  public void awaitEnd() throws InterruptedException {
    done.await();
  }

  /** Tells the harness the consumer is started (streaming or about to). */
  public static void ready() {
    System.out.println("READY");
    System.out.flush();
  }
}
