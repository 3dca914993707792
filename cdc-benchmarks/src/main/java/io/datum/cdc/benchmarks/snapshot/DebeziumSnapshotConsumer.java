package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.benchmarks.e2e.ConsumerProbe;
import io.datum.cdc.benchmarks.e2e.DebeziumEngines;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Child JVM of {@link SnapshotHarness}: Debezium Engine 3.6.1 with the PostgreSQL connector, {@code
 * plugin.name=pgoutput}, {@code snapshot.mode=initial}, {@code snapshot.max.threads} as given, a
 * slot of a new name (Debezium creates it) and the harness's publication, offsets in memory ({@code
 * MemoryOffsetBackingStore}), records in Kafka Connect form (no serialization), a handler that
 * marks every record processed; it stops once it has counted as many records of the tables' topics
 * as the tables hold rows (every one a snapshot read, {@code op=r}).
 */
public final class DebeziumSnapshotConsumer {
  private DebeziumSnapshotConsumer() {}

  /**
   * Runs the consumer.
   *
   * @param args host port database user password slot publication tables(comma-separated)
   *     expectedRows timeoutSeconds threads; an empty password as {@code -}
   * @throws Exception if the engine cannot be run
   */
  public static void main(String[] args) throws Exception {
    String slot = args[5];
    List<String> tables = Arrays.asList(args[7].split(","));
    long expected = Long.parseLong(args[8]);
    long timeoutSeconds = Long.parseLong(args[9]);
    int threads = Integer.parseInt(args[10]);
    Properties props = DebeziumEngines.postgres("snapshot-" + slot, "snap", args);
    props.setProperty("snapshot.mode", "initial");
    props.setProperty("snapshot.max.threads", Integer.toString(threads));
    props.setProperty(
        "table.include.list",
        tables.stream().map(t -> "public\\." + t).collect(Collectors.joining(",")));
    Set<String> topics = new HashSet<>();
    for (String t : tables) {
      topics.add("snap.public." + t);
    }
    ConsumerProbe probe = new ConsumerProbe(expected);
    DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(props)
            .using(DebeziumEngines.exitOnFailure())
            .notifying(
                (List<RecordChangeEvent<SourceRecord>> records,
                    DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
                  for (RecordChangeEvent<SourceRecord> r : records) {
                    SourceRecord record = r.record();
                    if (record.value() != null && topics.contains(record.topic())) {
                      probe.event();
                    }
                    committer.markProcessed(r);
                  }
                  committer.markBatchFinished();
                })
            .build();
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.execute(engine);
    probe.await(timeoutSeconds);
    probe.report();
    engine.close();
    executor.shutdown();
    System.exit(0);
  }
}
