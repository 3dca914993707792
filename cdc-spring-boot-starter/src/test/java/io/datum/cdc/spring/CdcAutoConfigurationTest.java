package io.datum.cdc.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.config.OriginFilter;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.event.CdcHandler;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Binding and bean wiring, without a server (the source is built, not started). */
class CdcAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(CdcAutoConfiguration.class, CdcMetricsAutoConfiguration.class))
          .withPropertyValues(
              "datum.cdc.jdbc-url=jdbc:postgresql://localhost:1/none",
              "datum.cdc.slot=s1",
              "datum.cdc.publication=p1");

  @Test
  void everyPropertyBindsAndTheSourceBuilds() {
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues(
            "datum.cdc.user=u",
            "datum.cdc.password=pw",
            "datum.cdc.primary-jdbc-url=jdbc:postgresql://primary:5432/db",
            "datum.cdc.connection-properties.ApplicationName=app",
            "datum.cdc.create-slot=true",
            "datum.cdc.create-publication=true",
            "datum.cdc.publication-tables=public.a,public.b",
            "datum.cdc.handoff-capacity=64",
            "datum.cdc.handler-threads=8",
            "datum.cdc.handler-ordering=table",
            "datum.cdc.status-interval=250ms",
            "datum.cdc.stop-timeout=5s",
            "datum.cdc.trust-slot-position=true",
            "datum.cdc.allow-cluster-change=true",
            "datum.cdc.allow-publication-change=true",
            "datum.cdc.failover-slot=true",
            "datum.cdc.reconnect-attempts=3",
            "datum.cdc.reconnect-initial-backoff=10ms",
            "datum.cdc.reconnect-max-backoff=1s",
            "datum.cdc.acknowledgement-durability=transaction",
            "datum.cdc.on-decode-error=stop",
            "datum.cdc.snapshot-modes=initial,on-request",
            "datum.cdc.snapshot-parallelism=2",
            "datum.cdc.snapshot-chunk-rows=100",
            "datum.cdc.messages=true",
            "datum.cdc.protocol-version=4",
            "datum.cdc.streaming=parallel",
            "datum.cdc.two-phase=true",
            "datum.cdc.binary=true",
            "datum.cdc.origin=none",
            "datum.cdc.memory-budget=1048576",
            "datum.cdc.spill-directory=/tmp/spill",
            "datum.cdc.wait-for-slot=2s",
            "datum.cdc.slot-creation-timeout=3s",
            "datum.cdc.checkpoint-store=memory:",
            "datum.cdc.fail-fast=false",
            "datum.cdc.start-timeout=7s",
            "datum.cdc.phase=42",
            "datum.cdc.health.lag-threshold-bytes=1000",
            "datum.cdc.health.lag-status=LAGGING")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              CdcProperties p = context.getBean(CdcProperties.class);
              assertThat(p.getUser()).isEqualTo("u");
              assertThat(p.getPassword()).isEqualTo("pw");
              assertThat(p.getPrimaryJdbcUrl()).isEqualTo("jdbc:postgresql://primary:5432/db");
              assertThat(p.getConnectionProperties()).isEqualTo(Map.of("ApplicationName", "app"));
              assertThat(p.getCreateSlot()).isTrue();
              assertThat(p.getCreatePublication()).isTrue();
              assertThat(p.getPublicationTables()).containsExactly("public.a", "public.b");
              assertThat(p.getHandoffCapacity()).isEqualTo(64);
              assertThat(p.getHandlerThreads()).isEqualTo(8);
              assertThat(p.getHandlerOrdering()).isEqualTo(HandlerOrdering.TABLE);
              assertThat(p.getStatusInterval()).isEqualTo(Duration.ofMillis(250));
              assertThat(p.getStopTimeout()).isEqualTo(Duration.ofSeconds(5));
              assertThat(p.getTrustSlotPosition()).isTrue();
              assertThat(p.getAllowClusterChange()).isTrue();
              assertThat(p.getAllowPublicationChange()).isTrue();
              assertThat(p.getFailoverSlot()).isTrue();
              assertThat(p.getReconnectAttempts()).isEqualTo(3);
              assertThat(p.getReconnectInitialBackoff()).isEqualTo(Duration.ofMillis(10));
              assertThat(p.getReconnectMaxBackoff()).isEqualTo(Duration.ofSeconds(1));
              assertThat(p.getAcknowledgementDurability())
                  .isEqualTo(AcknowledgementDurability.TRANSACTION);
              assertThat(p.getOnDecodeError()).isEqualTo(DecodeErrorPolicy.STOP);
              assertThat(p.getSnapshotModes())
                  .isEqualTo(List.of(SnapshotMode.INITIAL, SnapshotMode.ON_REQUEST));
              assertThat(p.getSnapshotParallelism()).isEqualTo(2);
              assertThat(p.getSnapshotChunkRows()).isEqualTo(100);
              assertThat(p.getMessages()).isTrue();
              assertThat(p.getProtocolVersion()).isEqualTo(4);
              assertThat(p.getStreaming()).isEqualTo(StreamingMode.PARALLEL);
              assertThat(p.getTwoPhase()).isTrue();
              assertThat(p.getBinary()).isTrue();
              assertThat(p.getOrigin()).isEqualTo(OriginFilter.NONE);
              assertThat(p.getMemoryBudget()).isEqualTo(1048576L);
              assertThat(p.getSpillDirectory()).isEqualTo(Path.of("/tmp/spill"));
              assertThat(p.getWaitForSlot()).isEqualTo(Duration.ofSeconds(2));
              assertThat(p.getSlotCreationTimeout()).isEqualTo(Duration.ofSeconds(3));
              assertThat(p.isFailFast()).isFalse();
              assertThat(p.getStartTimeout()).isEqualTo(Duration.ofSeconds(7));
              assertThat(context.getBean(PgCdcSourceLifecycle.class).getPhase()).isEqualTo(42);
              assertThat(p.getHealth().getLagThresholdBytes()).isEqualTo(1000L);
              assertThat(p.getHealth().getLagStatus()).isEqualTo("LAGGING");
              PgCdcSource source = context.getBean(PgCdcSource.class);
              assertThat(source.slot()).isEqualTo("s1");
              assertThat(source.publication()).isEqualTo("p1");
              assertThat(context).hasBean("datumCdcHealthIndicator");
              assertThat(context).hasSingleBean(io.datum.cdc.micrometer.PgCdcSourceMetrics.class);
            });
  }

  @Test
  void aMissingHandlerBeanFailsNamingIt() {
    runner.run(
        context ->
            assertThat(context)
                .getFailure()
                .rootCause()
                .isInstanceOf(NoSuchBeanDefinitionException.class)
                .hasMessageContaining("io.datum.cdc.event.CdcHandler"));
  }

  @Test
  void anUnknownEnumValueFailsNamingTheProperty() {
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues("datum.cdc.acknowledgement-durability=sometimes")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .hasRootCauseInstanceOf(IllegalArgumentException.class);
              Throwable bind = context.getStartupFailure();
              while (bind != null && !(bind instanceof BindException)) {
                bind = bind.getCause();
              }
              assertThat(bind)
                  .isNotNull()
                  .hasMessageContaining("datum.cdc.acknowledgement-durability");
            });
  }

  @Test
  void aPropertyNothingBindsFailsNamingItAndTheOptionItResembles() {
    // a misspelt name, and the grouped name snapshot.modes that an earlier version had: both were
    // ignored without a word (no initial snapshot); the health group's own names still bind
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues(
            "datum.cdc.protocol-versoin=9",
            "datum.cdc.snapshot.modes=initial",
            "datum.cdc.health.lag-threshold-bytes=10",
            "datum.cdc.connection-properties.sslmode=disable")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage(
                        "datum-cdc: datum.cdc.protocol-versoin, datum.cdc.snapshot.modes (did you"
                            + " mean datum.cdc.snapshot-modes?) are no properties of datum-cdc and"
                            + " would be ignored; correct or remove them (the options are"
                            + " datum.cdc.<option> with the names of docs/configuration.md)"));
  }

  @Test
  void everyOptionIsItsDeclaredNameAndBindsInItsRelaxedForms() {
    // the names of docs/configuration.md, and their camel case
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues(
            "datum.cdc.snapshot-modes=initial",
            "datum.cdc.reconnectMaxBackoff=2s",
            "datum.cdc.fail-fast=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              CdcProperties p = context.getBean(CdcProperties.class);
              assertThat(p.getSnapshotModes()).containsExactly(SnapshotMode.INITIAL);
              assertThat(p.getReconnectMaxBackoff()).isEqualTo(Duration.ofSeconds(2));
            });
  }

  @Test
  void aMissingRequiredPropertyFailsNamingIt() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(CdcAutoConfiguration.class))
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues("datum.cdc.slot=s1", "datum.cdc.publication=p1")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("datum.cdc.jdbc-url"));
  }

  @Test
  void anApplicationStoreBeanWins() {
    MemoryCheckpointStore mine = new MemoryCheckpointStore();
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withBean(CdcCheckpointStore.class, () -> mine)
        .withPropertyValues(
            "datum.cdc.checkpoint-store=file:/nonexistent/never", "datum.cdc.fail-fast=false")
        .run(context -> assertThat(context.getBean(CdcCheckpointStore.class)).isSameAs(mine));
  }

  @Test
  void disabledConfiguresNothing() {
    runner
        .withPropertyValues("datum.cdc.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(PgCdcSource.class));
  }

  @Test
  void managementHealthDatumCdcEnabledFalseTurnsTheIndicatorOff() {
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues(
            "datum.cdc.fail-fast=false", "management.health.datum-cdc.enabled=false")
        .run(
            context -> {
              assertThat(context).hasSingleBean(PgCdcSource.class);
              assertThat(context).doesNotHaveBean("datumCdcHealthIndicator");
            });
    runner
        .withBean(CdcHandler.class, () -> (event, checkpoints) -> {})
        .withPropertyValues("datum.cdc.fail-fast=false", "management.health.defaults.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean("datumCdcHealthIndicator"));
  }

  @Test
  void theHealthErrorDetailHasNoCredentials() {
    assertThat(
            PgCdcSourceHealthIndicator.redact(
                "CdcConnectionException: cannot connect to"
                    + " jdbc:postgresql://app:s3cret@db:5432/shop?user=app&password=s3cret&ssl=true"))
        .isEqualTo(
            "CdcConnectionException: cannot connect to"
                + " jdbc:postgresql://***@db:5432/shop?user=***&password=***&ssl=true");
    assertThat(PgCdcSourceHealthIndicator.redact("jdbc:postgresql://db/shop;Password=x y"))
        .isEqualTo("jdbc:postgresql://db/shop;Password=*** y");
    assertThat(PgCdcSourceHealthIndicator.redact(null)).isNull();
  }

  @Test
  void theMetadataCarriesTheBuildersDefaultsAndTheDecodeErrorValues() throws Exception {
    String json;
    try (java.io.InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    com.fasterxml.jackson.databind.JsonNode root =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
    Map<String, com.fasterxml.jackson.databind.JsonNode> byName = new java.util.HashMap<>();
    root.get("properties").forEach(p -> byName.put(p.get("name").asText(), p));
    assertThat(byName.get("datum.cdc.on-decode-error").get("defaultValue").asText())
        .isEqualTo("raw");
    assertThat(byName.get("datum.cdc.on-decode-error").get("description").asText())
        .isEqualTo(io.datum.cdc.core.config.SourceOptions.ON_DECODE_ERROR.description());
    assertThat(byName.get("datum.cdc.handoff-capacity").get("defaultValue").asInt())
        .isEqualTo(1024);
    assertThat(byName.get("datum.cdc.status-interval").get("defaultValue").asText())
        .isEqualTo("1s");
    assertThat(byName.get("datum.cdc.snapshot-chunk-rows").get("defaultValue").asInt())
        .isEqualTo(8192);
    assertThat(byName.get("datum.cdc.health.lag-status").get("defaultValue").asText())
        .isEqualTo("DOWN");
    List<String> values = new java.util.ArrayList<>();
    root.get("hints")
        .forEach(
            h -> {
              if (h.get("name").asText().equals("datum.cdc.on-decode-error")) {
                h.get("values").forEach(v -> values.add(v.get("value").asText()));
              }
            });
    assertThat(values).containsExactly("raw", "stop", "skip");
  }
}
