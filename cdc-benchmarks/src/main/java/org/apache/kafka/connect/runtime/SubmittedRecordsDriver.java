package org.apache.kafka.connect.runtime;

import org.apache.kafka.connect.source.SourceRecord;

/**
 * The benchmarks' contact with Kafka Connect's {@code SubmittedRecords}, the anchor the coordinator
 * is compared with. {@code SubmittedRecords} is package-private in connect-runtime, so this class
 * lives in its package (allowed on the class path, where connect-runtime is not a named module) and
 * calls it directly, without reflection, as Connect's {@code AbstractWorkerSourceTask} does: {@code
 * submit(SourceRecord)} on the task thread for each record handed to the producer, {@code
 * SubmittedRecord.ack()} from the producer callback, and {@code committableOffsets()} to remove the
 * acknowledged prefix and get the offsets to commit.
 *
 * <p>Not thread-safe, like {@code SubmittedRecords}: callers serialise {@link #submit} and {@link
 * #committableOffsets}; {@link Acks#ack} and {@link Acks#ackEvent} are safe from any thread.
 */
public final class SubmittedRecordsDriver {

  private final SubmittedRecords submitted = new SubmittedRecords();

  /**
   * Submits {@code records} in order (commit order).
   *
   * @param records the records of one batch, in commit order
   * @param reuse room for the handles ({@link Acks#Acks(int)}) or those of an earlier batch of the
   *     same size, to overwrite; null to allocate them
   * @return the handles, in commit order
   */
  public Acks submit(SourceRecord[] records, Acks reuse) {
    Acks acks = reuse != null ? reuse : new Acks(records.length);
    SubmittedRecords.SubmittedRecord[] inCommitOrder = acks.inCommitOrder;
    for (int i = 0; i < records.length; i++) {
      inCommitOrder[i] = submitted.submit(records[i]);
    }
    return acks;
  }

  /**
   * Removes the acknowledged prefix of every partition's records and returns the offsets that may
   * be committed (an instance of the package-private {@code CommittableOffsets}).
   */
  public Object committableOffsets() {
    return submitted.committableOffsets();
  }

  /** The handles of one submitted batch. */
  public static final class Acks {
    final SubmittedRecords.SubmittedRecord[] inCommitOrder;
    final SubmittedRecords.SubmittedRecord[] inAckOrder;

    /**
     * Creates room for the handles of a batch.
     *
     * @param size the number of records of the batch
     */
    public Acks(int size) {
      this.inCommitOrder = new SubmittedRecords.SubmittedRecord[size];
      this.inAckOrder = new SubmittedRecords.SubmittedRecord[size];
    }

    /**
     * Arranges the handles in acknowledgement order, for {@link #ack}.
     *
     * @param ackOrder a permutation of the record indexes: the acknowledgement order
     */
    public void arrange(int[] ackOrder) {
      for (int i = 0; i < ackOrder.length; i++) {
        inAckOrder[i] = inCommitOrder[ackOrder[i]];
      }
    }

    /** Acknowledges the {@code i}-th record of the order given to {@link #arrange}. */
    public void ack(int i) {
      inAckOrder[i].ack();
    }

    /** Acknowledges the {@code e}-th record submitted. */
    public void ackEvent(int e) {
      inCommitOrder[e].ack();
    }

    /**
     * Returns the handles of some of these records, for one thread.
     *
     * @param events indexes of records submitted (into this batch), in the order the thread
     *     acknowledges them
     * @return handles whose {@link #ackEvent}{@code (i)} acknowledges record {@code events[i]}
     */
    public Acks select(int[] events) {
      Acks selected = new Acks(events.length);
      for (int i = 0; i < events.length; i++) {
        selected.inCommitOrder[i] = inCommitOrder[events[i]];
      }
      return selected;
    }

    /** Returns the number of handles. */
    public int size() {
      return inCommitOrder.length;
    }
  }
}
