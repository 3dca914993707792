package io.datum.cdc.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** The starter against a real PostgreSQL 17: start, deliver, health, stop. */
@EmbeddedPostgresTest
class CdcStarterPostgresTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;

  CdcStarterPostgresTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private ApplicationContextRunner runner(String slot, CdcHandler handler) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(CdcAutoConfiguration.class))
        .withBean(CdcHandler.class, () -> handler)
        .withPropertyValues(
            "datum.cdc.jdbc-url=" + pg.jdbcUrl(),
            "datum.cdc.user=" + pg.user(),
            "datum.cdc.password=" + pg.password(),
            "datum.cdc.slot=" + slot,
            "datum.cdc.publication=" + slot,
            "datum.cdc.create-slot=true",
            "datum.cdc.status-interval=100ms");
  }

  @Test
  @ExtendWith(OutputCaptureExtension.class)
  void rowsReachTheHandlerBeanHealthIsUpAndCloseReleasesTheSlot(CapturedOutput output)
      throws Exception {
    pg.execute(
        "CREATE TABLE spring_rows (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION spring_rows FOR TABLE spring_rows");
    List<Object> ids = new CopyOnWriteArrayList<>();
    AtomicReference<PgCdcSource> ran = new AtomicReference<>();
    CdcHandler handler =
        (event, checkpoints) -> {
          if (event instanceof InsertEvent insert) {
            ids.add(insert.after().toMap().get("id"));
          }
          checkpoints.acknowledge(event.offset());
        };
    runner("spring_rows", handler)
        .withPropertyValues("datum.cdc.health.lag-threshold-bytes=1000000000")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              PgCdcSource source = context.getBean(PgCdcSource.class);
              ran.set(source);
              assertThat(source.state()).isEqualTo(SourceState.STREAMING);
              pg.execute(
                  "INSERT INTO spring_rows VALUES (1, 'a')",
                  "INSERT INTO spring_rows VALUES (2, 'b')");
              await().atMost(WAIT).until(() -> ids.size() == 2);
              assertThat(ids).containsExactly(1, 2);
              PgCdcSourceHealthIndicator indicator =
                  new PgCdcSourceHealthIndicator(
                      context.getBean(PgCdcSourceLifecycle.class),
                      context.getBean(CdcProperties.class).getHealth());
              Health health = indicator.health();
              assertThat(health.getStatus()).isEqualTo(Status.UP);
              assertThat(health.getDetails())
                  .containsEntry("slot", "spring_rows")
                  .containsEntry("slotActive", true)
                  .containsEntry("walStatus", "reserved")
                  .containsKeys("watermark", "pendingTransactions", "reconnects", "lagBytes");
              assertThat(slotActive("spring_rows")).isEqualTo("t");
            });
    await().atMost(WAIT).until(() -> "f".equals(slotActive("spring_rows")));
    assertThat(ran.get().watermark()).isNotEqualTo(io.datum.cdc.PgLsn.ZERO);
    assertThat(output.getAll())
        .contains(
            "datum-cdc: source on slot spring_rows stopped at durable watermark "
                + ran.get().watermark());
  }

  @Test
  void lagOverTheThresholdReportsTheConfiguredStatus() throws Exception {
    pg.execute(
        "CREATE TABLE spring_lag (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION spring_lag FOR TABLE spring_lag");
    runner("spring_lag", (event, checkpoints) -> {})
        .withPropertyValues(
            "datum.cdc.health.lag-threshold-bytes=1",
            "datum.cdc.health.lag-status=LAGGING",
            "datum.cdc.health.lag-cache-time=0s")
        .run(
            context -> {
              PgCdcSourceHealthIndicator indicator =
                  new PgCdcSourceHealthIndicator(
                      context.getBean(PgCdcSourceLifecycle.class),
                      context.getBean(CdcProperties.class).getHealth());
              pg.execute(
                  "INSERT INTO spring_lag SELECT g, repeat('x', 100) FROM generate_series(1, 100) g");
              await()
                  .atMost(WAIT)
                  .until(() -> indicator.health().getStatus().getCode().equals("LAGGING"));
            });
  }

  @Test
  void aFailedStartFailsTheContextWithFailFast() {
    runner("spring_nopub", (event, checkpoints) -> {})
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .cause()
                    .hasMessageContaining("datum-cdc")
                    .hasMessageContaining("spring_nopub"));
  }

  @Test
  void aFailedStartIsHealthDownWithoutFailFast() {
    runner("spring_nopub2", (event, checkpoints) -> {})
        .withPropertyValues("datum.cdc.fail-fast=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              PgCdcSourceHealthIndicator indicator =
                  new PgCdcSourceHealthIndicator(
                      context.getBean(PgCdcSourceLifecycle.class),
                      context.getBean(CdcProperties.class).getHealth());
              await().atMost(WAIT).until(() -> indicator.health().getStatus().equals(Status.DOWN));
              assertThat(indicator.health().getDetails()).containsKey("error");
              assertThat(indicator.health().getDetails())
                  .containsEntry("slotActive", "unknown")
                  .containsEntry("walStatus", "unknown");
            });
  }

  private String slotActive(String slot) throws Exception {
    return pg.queryString(
        "SELECT active FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
  }
}
