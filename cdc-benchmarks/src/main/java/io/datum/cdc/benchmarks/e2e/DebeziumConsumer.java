package io.datum.cdc.benchmarks.e2e;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Child JVM of {@link EndToEndHarness}: Debezium Engine with the PostgreSQL connector on pgoutput,
 * the existing slot and publication, {@code snapshot.mode=no_data}, records in Kafka Connect form
 * (no serialization), a handler that marks every record processed; stops after the expected number
 * of change records (tombstones and other topics are not counted).
 *
 * <p>Arguments: host port database user password slot publication table expectedEvents
 * timeoutSeconds
 */
public final class DebeziumConsumer {
  private DebeziumConsumer() {}

  public static void main(String[] args) throws Exception {
    String slot = args[5], table = args[7];
    long expected = Long.parseLong(args[8]);
    long timeoutSeconds = Long.parseLong(args[9]);
    Properties props = DebeziumEngines.postgres("e2e-" + slot, "e2e", args);
    props.setProperty("snapshot.mode", "no_data");
    props.setProperty("table.include.list", "public." + table);
    String topic = "e2e.public." + table;
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
                    if (record.value() != null && topic.equals(record.topic())) {
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
