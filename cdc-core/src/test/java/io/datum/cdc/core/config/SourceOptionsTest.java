package io.datum.cdc.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.core.PgCdcSource;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The declarations: their names, defaults, text forms and checks, and the builder on them. */
class SourceOptionsTest {

  @Test
  void namesAreKebabCaseAndUniqueAndEveryDefaultPassesItsChecks() {
    Set<String> names = new HashSet<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      assertTrue(o.name().matches("[a-z]+(-[a-z]+)*"), o.name());
      assertTrue(names.add(o.name()), "twice: " + o.name());
      assertTrue(!o.description().isBlank() && o.description().endsWith("."), o.name());
      if (o.defaultValue() != null) {
        check(o);
      }
      assertEquals(o, SourceOptions.named(o.name()));
    }
  }

  private static <T> void check(SourceOption<T> o) {
    assertEquals(o.defaultValue(), o.validate(o.defaultValue()), o.name());
    if (o.kind() != SourceOption.Kind.SECRET) {
      assertEquals(o.defaultValue(), o.parse(o.format(o.defaultValue())), o.name());
    }
  }

  @Test
  void textFormsParseToTheTypedValues() {
    assertEquals(Duration.ofMillis(1500), SourceOptions.WAIT_FOR_SLOT.parse("1500ms"));
    assertEquals(Duration.ofSeconds(30), SourceOptions.STOP_TIMEOUT.parse("PT30S"));
    assertEquals(Duration.ZERO, SourceOptions.WAIT_FOR_SLOT.parse("0"));
    assertEquals(512L << 10, SourceOptions.MEMORY_BUDGET.parse("512K"));
    assertEquals(
        Set.of(SnapshotMode.INITIAL_ONLY), SourceOptions.SNAPSHOT_MODES.parse("initial_only"));
    assertEquals(StreamingMode.PARALLEL, SourceOptions.STREAMING.parse(" Parallel "));
    assertEquals(true, SourceOptions.BINARY.parse("TRUE"));
    assertEquals("64m", SourceOptions.MEMORY_BUDGET.format(64L << 20));
    assertEquals(
        "initial,on-request",
        SourceOptions.SNAPSHOT_MODES.format(
            java.util.EnumSet.of(SnapshotMode.INITIAL, SnapshotMode.ON_REQUEST)));
  }

  @Test
  void badValuesNameTheOptionAndWhatItTakes() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> SourceOptions.ORIGIN.parse("some"));
    assertEquals("option origin must be one of any, none, was \"some\"", e.getMessage());
    e = assertThrows(CdcConfigurationException.class, () -> SourceOptions.WAIT_FOR_SLOT.parse("5"));
    assertTrue(
        e.getMessage().startsWith("option wait-for-slot must be a duration"), e.getMessage());
    e =
        assertThrows(
            CdcConfigurationException.class, () -> SourceOptions.SNAPSHOT_PARALLELISM.parse("65"));
    assertEquals("option snapshot-parallelism: must be 1 to 64, was 65", e.getMessage());
    e =
        assertThrows(
            CdcConfigurationException.class,
            () -> SourceOptions.SNAPSHOT_MODES.parse("never,initial"));
    assertTrue(e.getMessage().contains("never cannot be combined"), e.getMessage());
    e = assertThrows(CdcConfigurationException.class, () -> SourceOptions.named("no-such-option"));
    assertTrue(e.getMessage().contains("wait-for-slot"), e.getMessage());
  }

  @Test
  void theBuilderSetsOptionsByNameAndKeepsItsSettersExceptions() {
    PgCdcSource.Builder b = PgCdcSource.builder();
    b.option("wait-for-slot", "2s").option(SourceOptions.STREAMING, StreamingMode.ON);
    assertThrows(IllegalArgumentException.class, () -> b.handoffCapacity(0));
    assertThrows(IllegalArgumentException.class, () -> b.waitForSlot(Duration.ofSeconds(-1)));
    assertThrows(CdcConfigurationException.class, () -> b.snapshotParallelism(0));
    assertThrows(CdcConfigurationException.class, () -> b.option("handoff-capacity", "0"));
    assertThrows(CdcConfigurationException.class, () -> b.option("slot", "Bad-Slot"));
  }

  @Test
  void optionsThatMustAgreeAreCheckedAtBuild() throws Exception {
    try (CdcCheckpointStore store = CheckpointStores.open("memory:")) {
      PgCdcSource.Builder b =
          PgCdcSource.builder()
              .jdbcUrl("jdbc:postgresql://localhost/db")
              .slot("s1")
              .publication("p1")
              .checkpointStore(store)
              .option("reconnect-initial-backoff", "1m")
              .option("reconnect-max-backoff", "30s");
      CdcConfigurationException e = assertThrows(CdcConfigurationException.class, b::build);
      assertTrue(e.getMessage().contains("reconnect-max-backoff"), e.getMessage());
      b.option("reconnect-max-backoff", "1m");
      try (PgCdcSource source = b.build()) {
        assertEquals("s1", source.slot());
      }
    }
  }

  @Test
  void aDurationTooLongForNanosecondsIsRefusedWhenGivenNamingTheOption() {
    PgCdcSource.Builder b = PgCdcSource.builder();
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> b.option("wait-for-slot", "110000d"));
    assertTrue(e.getMessage().startsWith("option wait-for-slot: at most"), e.getMessage());
    // the longest that fits is taken
    b.option(
        SourceOptions.SLOT_CREATION_TIMEOUT, Duration.ofSeconds(SourceOption.MAX_DURATION_SECONDS));
  }

  @Test
  void aMissingNameOrValueIsAConfigurationError() {
    PgCdcSource.Builder b = PgCdcSource.builder();
    assertThrows(CdcConfigurationException.class, () -> b.option((String) null, "1"));
    assertThrows(CdcConfigurationException.class, () -> b.option("slot", null));
  }
}
