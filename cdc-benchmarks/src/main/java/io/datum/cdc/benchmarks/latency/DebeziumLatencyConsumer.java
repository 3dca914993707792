package io.datum.cdc.benchmarks.latency;

import io.datum.cdc.benchmarks.e2e.DebeziumEngines;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Child JVM of {@link LatencyHarness}: Debezium Engine with the PostgreSQL connector on the
 * existing slot ({@code snapshot.mode=no_data}), records in Kafka Connect form, a handler that
 * records each create's commit-to-handler latency ({@code source.ts_us}, the commit time in
 * microseconds) and marks it processed; offsets flushed at once, in memory.
 *
 * <p>Arguments: host port database user password slot publication table (the first seven as {@link
 * DebeziumEngines#postgres}).
 */
public final class DebeziumLatencyConsumer {
  private DebeziumLatencyConsumer() {}

  /**
   * Runs the engine until the END row.
   *
   * @param args as above
   * @throws Exception if the engine fails to start
   */
  public static void main(String[] args) throws Exception {
    Properties props = DebeziumEngines.postgres("latency-" + args[5], "latency", args);
    props.setProperty("snapshot.mode", "no_data");
    props.setProperty("table.include.list", "public." + args[7]);
    String topic = "latency.public." + args[7];
    Latencies latencies = new Latencies();
    ChildProtocol protocol = new ChildProtocol();
    DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(props)
            .using(DebeziumEngines.exitOnFailure())
            .notifying(
                (List<RecordChangeEvent<SourceRecord>> records,
                    DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
                  for (RecordChangeEvent<SourceRecord> r : records) {
                    long now = Latencies.nowMicros();
                    SourceRecord record = r.record();
                    if (record.value() instanceof Struct value && topic.equals(record.topic())) {
                      Struct after = value.getStruct("after");
                      if (after != null && ChildProtocol.END.equals(after.get("payload"))) {
                        protocol.end(latencies);
                      } else if (after != null) {
                        long commit = value.getStruct("source").getInt64("ts_us");
                        latencies.record(commit, now);
                      }
                    }
                    committer.markProcessed(r);
                  }
                  committer.markBatchFinished();
                })
            .build();
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.execute(engine);
    ChildProtocol.ready();
    protocol.awaitEnd();
    engine.close();
    executor.shutdown();
    System.exit(0);
  }
}
