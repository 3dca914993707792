package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags of {@code pgcdc stream} against the declarations of the source options: every option
 * has a flag or a reason not to, every flag exists, and a flag's default is the option's default.
 */
class StreamFlagsTest {

  private static CommandSpec spec() {
    return StreamFlags.derive(new CommandLine(new StreamCommand()).getCommandSpec());
  }

  @Test
  void everyOptionHasAFlagOrAReasonNotTo() {
    CommandSpec spec = spec();
    List<String> problems = new ArrayList<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      String flag = StreamFlags.all().get(o);
      boolean reason = StreamFlags.NOT_OFFERED.containsKey(o);
      if ((flag != null) == reason) {
        problems.add(o + (reason ? ": both a flag and a reason" : ": neither a flag nor a reason"));
      } else if (flag != null && spec.findOption(flag) == null) {
        problems.add(o + ": pgcdc stream has no flag " + flag);
      }
    }
    assertEquals(List.of(), problems, "update StreamFlags.FLAGS or StreamFlags.NOT_OFFERED");
  }

  @Test
  void everyFlagExistsAndDefaultsToTheOptionsDefault() {
    CommandSpec spec = spec();
    List<String> problems = new ArrayList<>();
    for (Map.Entry<SourceOption<?>, String> e : StreamFlags.all().entrySet()) {
      SourceOption<?> o = e.getKey();
      OptionSpec flag = spec.findOption(e.getValue());
      if (flag == null) {
        problems.add(o + ": pgcdc stream has no flag " + e.getValue());
        continue;
      }
      Object def = StreamFlags.defaultOf(spec, o);
      if (flag.arity().max() == 0) {
        if (!Boolean.FALSE.equals(o.defaultValue())) {
          problems.add(o + ": " + e.getValue() + " can only turn on what is on by default");
        }
      } else if (def != null && !def.equals(o.defaultValue())) {
        problems.add(
            o
                + ": "
                + e.getValue()
                + " defaults to "
                + def
                + ", the option to "
                + o.defaultValue());
      }
      if (o.isRequired() != flag.required()) {
        problems.add(
            o + ": " + e.getValue() + (o.isRequired() ? " must" : " need not") + " be required");
      }
    }
    assertEquals(List.of(), problems);
  }

  /** The stream command line parsed from the required options and then {@code more}. */
  private static CommandLine parsed(String... more) {
    CommandLine cli = new CommandLine(new StreamCommand());
    StreamFlags.derive(cli.getCommandSpec());
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--url",
                "jdbc:postgresql://db/shop",
                "--slot",
                "s1",
                "--publication",
                "p1",
                "--store",
                "memory:"));
    args.addAll(List.of(more));
    cli.parseArgs(args.toArray(String[]::new));
    return cli;
  }

  @Test
  void givenFlagsBecomeTheOptionsValues() {
    CommandLine cli =
        parsed(
            "--wait-for-slot",
            "1.5",
            "--snapshot",
            "initial,on-request",
            "--durable-acks",
            "transaction",
            "--memory-budget",
            "2m",
            "--reconnect",
            "3");
    Map<SourceOption<?>, Object> values = StreamFlags.values(cli.getCommandSpec());
    assertEquals(Duration.ofMillis(1500), values.get(SourceOptions.WAIT_FOR_SLOT));
    assertEquals(
        Set.of(SnapshotMode.INITIAL, SnapshotMode.ON_REQUEST),
        values.get(SourceOptions.SNAPSHOT_MODES));
    assertEquals(2L << 20, values.get(SourceOptions.MEMORY_BUDGET));
    assertEquals(3, values.get(SourceOptions.RECONNECT_ATTEMPTS));
    assertEquals("s1", values.get(SourceOptions.SLOT));
    assertNotNull(values.get(SourceOptions.ACKNOWLEDGEMENT_DURABILITY));
    assertFalse(values.containsKey(SourceOptions.ORIGIN));
  }

  @Test
  void tablesAreSplitAtCommasOutsideDoubleQuotesOnly() {
    for (String[] given :
        List.of(
            new String[] {"\"Sch, ëma\".\"a,b\",public.plain,t"},
            new String[] {"\"Sch, ëma\".\"a,b\",public.plain", "--tables", "t"})) {
      List<String> args = new java.util.ArrayList<>(List.of("--create-publication", "--tables"));
      args.addAll(List.of(given));
      CommandLine cli = parsed(args.toArray(String[]::new));
      Object tables =
          StreamFlags.values(cli.getCommandSpec()).get(SourceOptions.PUBLICATION_TABLES);
      assertEquals(
          List.of("\"Sch, ëma\".\"a,b\"", "public.plain", "t"), tables, String.join(" ", given));
    }
    // a quoted name alone, and two of them (what a trial gave)
    assertEquals(
        List.of("\"My.Table\"", "\"a,b\""),
        StreamFlags.values(
                parsed("--create-publication", "--tables", "\"My.Table\",\"a,b\"").getCommandSpec())
            .get(SourceOptions.PUBLICATION_TABLES));
    assertEquals(
        List.of(
            new io.datum.cdc.TableId("public", "My.Table"),
            new io.datum.cdc.TableId("public", "a,b")),
        List.of(io.datum.cdc.TableId.parse("\"My.Table\""), io.datum.cdc.TableId.parse("\"a,b\"")));
  }

  @Test
  void aBadValueIsRefusedNamingTheFlag() {
    CommandLine cli = parsed("--streaming", "sometimes");
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class, () -> StreamFlags.values(cli.getCommandSpec()));
    assertTrue(
        e.getMessage().startsWith("--streaming must be one of off, on, parallel"), e.getMessage());
  }

  /** A seconds flag takes a number of seconds or a duration; NaN and infinity are refused. */
  @Test
  void aSecondsFlagTakesSecondsOrADuration() {
    assertEquals(Duration.ofMinutes(5), waitForSlot("5m"));
    assertEquals(Duration.ofMillis(250), waitForSlot("250ms"));
    assertEquals(Duration.ofMillis(2500), waitForSlot("2.5"));
    assertEquals(Duration.ZERO, waitForSlot("0"));
    for (String bad : List.of("NaN", "Infinity", "-1", "1e400", "5 minutes")) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> waitForSlot(bad), bad);
      assertTrue(e.getMessage().startsWith("--wait-for-slot"), e.getMessage());
    }
  }

  private static Duration waitForSlot(String value) {
    CommandLine cli = parsed("--wait-for-slot", value);
    return (Duration) StreamFlags.values(cli.getCommandSpec()).get(SourceOptions.WAIT_FOR_SLOT);
  }
}
