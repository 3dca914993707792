package io.datum.cdc.cli;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.core.AcknowledgementDurability;
import io.datum.cdc.core.PgCdcSource;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pgcdc stream}: streams a slot's changes to stdout as JSON lines (format 1), acknowledging
 * each event after its line is written and flushed.
 */
@Command(
    name = "stream",
    mixinStandardHelpOptions = true,
    description = "Stream committed changes of a publication as JSON lines on stdout.")
final class StreamCommand implements Callable<Integer> {

  @Option(
      names = "--url",
      required = true,
      description = "JDBC URL, jdbc:postgresql://host:port/db")
  String url;

  @Option(
      names = "--slot",
      required = true,
      description = "logical replication slot ([a-z0-9_]{1,63})")
  String slot;

  @Option(names = "--publication", required = true, description = "publication to stream")
  String publication;

  @Option(
      names = "--store",
      required = true,
      description = "checkpoint store URI: memory:, file:/dir, ...")
  String store;

  @Option(names = "--user", description = "role with the REPLICATION attribute")
  String user;

  @Option(
      names = "--password-env",
      paramLabel = "VAR",
      description = "name of the environment variable holding the password")
  String passwordEnv;

  @Option(names = "--create-slot", description = "create the slot if it does not exist")
  boolean createSlot;

  @Option(
      names = "--create-publication",
      description = "create the publication if it does not exist")
  boolean createPublication;

  @Option(
      names = "--tables",
      split = ",",
      paramLabel = "schema.table",
      description = "tables of a created publication (default: all tables)")
  List<String> tables = List.of();

  @Option(names = "--max-events", paramLabel = "N", description = "exit 0 after N events")
  Long maxEvents;

  @Option(
      names = "--idle-exit",
      paramLabel = "SECONDS",
      description = "exit 0 after SECONDS (a decimal number) without a change")
  Double idleExitSeconds;

  @Option(
      names = "--reconnect",
      paramLabel = "ATTEMPTS",
      defaultValue = "unlimited",
      description =
          "after a connection loss, reconnect up to ATTEMPTS times with exponential"
              + " backoff (0.2 s doubling to 30 s, with jitter); 0 exits at the first loss"
              + " (default: unlimited)")
  String reconnect;

  @Option(
      names = "--durable-acks",
      paramLabel = "event|transaction",
      defaultValue = "event",
      description =
          "when acknowledgements reach the store: per event (default; no printed and"
              + " acknowledged event comes again after a crash; one store write per event) or per"
              + " transaction (faster; after a crash the printed events of a transaction not yet"
              + " completely printed come again)")
  String durableAcks;

  @Option(
      names = "--messages",
      description =
          "also stream logical decoding messages (pg_logical_emit_message; PostgreSQL 14+)")
  boolean messages;

  @Option(
      names = "--wait-for-slot",
      paramLabel = "SECONDS",
      defaultValue = "0",
      description =
          "when the slot is active for another process, wait up to SECONDS for it"
              + " (default 0: fail at once, naming that process)")
  double waitForSlotSeconds;

  @Option(
      names = "--trust-slot-position",
      description =
          "resume at the slot's position when it is after the stored watermark"
              + " (the changes in between are lost); default: refuse to start")
  boolean trustSlotPosition;

  @Option(
      names = "--allow-cluster-change",
      description =
          "Resume although the stored checkpoint names another cluster (system identifier),"
              + " database or a timeline this server does not continue (a slot moved by"
              + " pg_upgrade). Without it such a start fails: the stored positions would skip"
              + " this server's changes.")
  boolean allowClusterChange;

  @Option(
      names = "--failover-slot",
      description =
          "Create the slot as a failover slot (PostgreSQL 17+), which a physical standby with"
              + " sync_replication_slots = on keeps, so that streaming resumes on the standby"
              + " after its promotion; an existing slot must be one. Refused on PostgreSQL 16 and"
              + " older. Give the URL every host with targetServerType=primary.")
  boolean failoverSlot;

  @Option(names = "--verbose", description = "print stack traces of errors")
  boolean verbose;

  @Mixin PgOutputCliOptions pgoutput = new PgOutputCliOptions();

  private static int reconnectAttempts(String value) {
    if (value.equals("unlimited")) {
      return Integer.MAX_VALUE;
    }
    try {
      int attempts = Integer.parseInt(value);
      if (attempts >= 0) {
        return attempts;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new CdcConfigurationException(
        "--reconnect must be a number of attempts (0 or more) or unlimited, was \"" + value + '"');
  }

  @Override
  public Integer call() throws Exception {
    String password = null;
    if (passwordEnv != null) {
      password = System.getenv(passwordEnv);
      if (password == null) {
        throw new CdcConfigurationException(
            "environment variable " + passwordEnv + " (--password-env) is not set");
      }
    }
    AcknowledgementDurability durability =
        switch (durableAcks) {
          case "transaction" -> AcknowledgementDurability.TRANSACTION;
          case "event" -> AcknowledgementDurability.EVENT;
          default ->
              throw new CdcConfigurationException(
                  "--durable-acks must be transaction or event, was \"" + durableAcks + '"');
        };
    if (waitForSlotSeconds < 0) {
      throw new CdcConfigurationException(
          "--wait-for-slot must not be negative, was " + waitForSlotSeconds);
    }
    int reconnectAttempts = reconnectAttempts(reconnect);
    if (!tables.isEmpty() && !createPublication) {
      throw new CdcConfigurationException("--tables applies only with --create-publication");
    }
    if (maxEvents != null && maxEvents < 1) {
      throw new CdcConfigurationException("--max-events must be at least 1, was " + maxEvents);
    }
    if (idleExitSeconds != null && !(idleExitSeconds > 0)) {
      throw new CdcConfigurationException("--idle-exit must be positive, was " + idleExitSeconds);
    }
    JsonLinesWriter out =
        new JsonLinesWriter(
            new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16));
    try (CdcCheckpointStore checkpoints = CheckpointStores.open(store)) {
      PgCdcSource.Builder builder =
          PgCdcSource.builder()
              .jdbcUrl(url)
              .slot(slot)
              .publication(publication)
              .checkpointStore(checkpoints)
              .createSlot(createSlot)
              .trustSlotPosition(trustSlotPosition)
              .allowClusterChange(allowClusterChange)
              .failoverSlot(failoverSlot)
              .acknowledgementDurability(durability)
              .messages(messages)
              .waitForSlot(Duration.ofMillis((long) (waitForSlotSeconds * 1000)))
              .reconnect(reconnectAttempts, Duration.ofMillis(200), Duration.ofSeconds(30))
              .createPublication(createPublication, tables.toArray(new String[0]));
      if (user != null) {
        builder.user(user);
      }
      builder.password(password);
      pgoutput.apply(builder);
      StreamSession session =
          new StreamSession(builder.build(), out, maxEvents == null ? Long.MAX_VALUE : maxEvents);
      session.run(idleExitSeconds == null ? 0 : (long) (idleExitSeconds * 1000));
    }
    return 0;
  }
}
