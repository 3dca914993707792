package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.micrometer.PgCdcSourceMetrics;
import io.datum.cdc.micrometer.TimedCheckpointStore;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;

/**
 * Child JVM of {@link EndToEndHarness}: datum-cdc's {@link PgCdcSource} on an existing slot, a
 * handler that acknowledges every event, stopping after the expected number of row events.
 *
 * <p>Arguments: jdbcUrl user password slot publication expectedEvents timeoutSeconds [mode]
 *
 * <p>With {@code values}: the handler reads every column value of every event ({@link
 * ValueReader}), as a real consumer touches them, before acknowledging it; otherwise it counts
 * only.
 *
 * <p>With {@code metrics}: cdc-micrometer's {@link PgCdcSourceMetrics} and {@link
 * TimedCheckpointStore} on a {@link PrometheusMeterRegistry} that a thread scrapes (renders to
 * Prometheus text) every second, as a Prometheus scraping at 1 s would: the cost of being watched.
 */
public final class DatumConsumer {
  private DatumConsumer() {}

  public static void main(String[] args) throws Exception {
    String jdbcUrl = args[0],
        user = args[1],
        password = args[2],
        slot = args[3],
        publication = args[4];
    long expected = Long.parseLong(args[5]);
    long timeoutSeconds = Long.parseLong(args[6]);
    boolean metrics = args.length > 7 && args[7].equals("metrics");
    boolean values = args.length > 7 && args[7].equals("values");
    ConsumerProbe probe = new ConsumerProbe(expected);
    PrometheusMeterRegistry registry =
        metrics ? new PrometheusMeterRegistry(PrometheusConfig.DEFAULT) : null;
    CdcCheckpointStore memory = new MemoryCheckpointStore();
    try (CdcCheckpointStore store =
            metrics ? TimedCheckpointStore.of(memory, registry, Tags.of("slot", slot)) : memory;
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(jdbcUrl)
                .user(user)
                .password(password)
                .slot(slot)
                .publication(publication)
                .createSlot(false)
                .trustSlotPosition(true)
                .checkpointStore(store)
                .build();
        PgCdcSourceMetrics binder =
            metrics
                ? PgCdcSourceMetrics.builder(source).lagInterval(Duration.ofSeconds(1)).build()
                : null) {
      Thread scraper = null;
      if (metrics) {
        binder.bindTo(registry);
        scraper = new Thread(() -> scrapeEverySecond(registry), "e2e-scraper");
        scraper.setDaemon(true);
        scraper.start();
      }
      source.start(
          (event, checkpoints) -> {
            if (values) {
              probe.values(ValueReader.hash(event));
            }
            if (event instanceof InsertEvent || event instanceof UpdateEvent) {
              probe.event();
            }
            checkpoints.acknowledge(event.offset());
          });
      probe.await(timeoutSeconds);
      probe.report();
      source.stop();
      if (scraper != null) {
        scraper.interrupt();
      }
    }
    System.exit(0);
  }

  private static void scrapeEverySecond(PrometheusMeterRegistry registry) {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        if (registry.scrape().isEmpty()) {
          throw new IllegalStateException("empty scrape");
        }
        Thread.sleep(1000); // the scrape interval; not synchronisation
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
