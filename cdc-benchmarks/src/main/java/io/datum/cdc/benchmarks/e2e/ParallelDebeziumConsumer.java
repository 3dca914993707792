package io.datum.cdc.benchmarks.e2e;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Child JVM of {@link ParallelHandlerHarness}: Debezium Engine (its asynchronous engine, the
 * default of 3.x) with {@code record.processing.threads} = n and {@code record.processing.order}
 * ORDERED or UNORDERED, a per-record {@code Consumer} (not a serial one) doing each update's work
 * ({@link ParallelWork}); stops after the expected number of updates.
 *
 * <p>Arguments: host port database user password slot publication table expectedEvents
 * timeoutSeconds threads order handler sinkUrl
 */
public final class ParallelDebeziumConsumer {
  private ParallelDebeziumConsumer() {}

  /**
   * Runs the consumer.
   *
   * @param args see the class comment
   * @throws Exception if the engine fails
   */
  public static void main(String[] args) throws Exception {
    String table = args[7];
    long expected = Long.parseLong(args[8]);
    long timeoutSeconds = Long.parseLong(args[9]);
    ParallelWork work = new ParallelWork(args[12], args[13]);
    Properties props = DebeziumEngines.postgres("parallel-" + args[5], "par", args);
    props.setProperty("snapshot.mode", "no_data");
    props.setProperty("table.include.list", "public." + table);
    props.setProperty("record.processing.threads", args[10]);
    props.setProperty("record.processing.order", args[11]);
    props.setProperty("record.processing.with.serial.consumer", "false");
    String topic = "par.public." + table;
    ConsumerProbe probe = new ConsumerProbe(expected);
    DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(props)
            .using(DebeziumEngines.exitOnFailure())
            .notifying(
                (RecordChangeEvent<SourceRecord> r) -> {
                  SourceRecord record = r.record();
                  if (record.value() instanceof Struct value
                      && topic.equals(record.topic())
                      && "u".equals(value.getString("op"))) {
                    Struct after = value.getStruct("after");
                    try {
                      work.apply(after.getInt32("id"), after.getInt32("v"));
                    } catch (java.sql.SQLException e) {
                      throw new IllegalStateException(e);
                    }
                    probe.event();
                  }
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
