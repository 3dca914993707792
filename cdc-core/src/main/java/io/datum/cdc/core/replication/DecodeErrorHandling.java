package io.datum.cdc.core.replication;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.core.assembly.DecodeFailures;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source's decode-error policy ({@code DecodeErrorPolicy}) for the changes whose column values
 * did not decode: counts them for {@code SourceMetrics}, logs them at WARN, and acknowledges the
 * skipped ones so that the watermark passes them. One per source, kept across reconnects; used on
 * the replication thread, its counters read from any thread.
 */
final class DecodeErrorHandling implements DecodeFailures {

  private static final Logger LOG = LoggerFactory.getLogger(DecodeErrorHandling.class);

  private final String slot;
  private final ValueFailure.Policy policy;
  private final FeedbackCoordinator coordinator;
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong withRaw = new AtomicLong();

  /** Raw values per table, column and type so far, to log the 1st, 10th, 100th, ... at WARN. */
  private final Map<String, Long> rawCounts = new HashMap<>();

  /**
   * @param slot the slot, for log lines
   * @param policy {@code stop}, {@code raw} or {@code skip}
   * @param coordinator where skipped events are acknowledged
   * @throws IllegalArgumentException for another policy name
   */
  DecodeErrorHandling(String slot, String policy, FeedbackCoordinator coordinator) {
    this.slot = slot;
    this.policy = ValueFailure.Policy.valueOf(policy.toUpperCase(Locale.ROOT));
    this.coordinator = coordinator;
  }

  /** Returns the policy the decoder applies to each value. */
  ValueFailure.Policy policy() {
    return policy;
  }

  /** Returns the events skipped so far. */
  long eventsSkipped() {
    return skipped.get();
  }

  /** Returns the events delivered with raw values so far. */
  long eventsWithUndecoded() {
    return withRaw.get();
  }

  @Override
  public boolean skips() {
    return policy == ValueFailure.Policy.SKIP;
  }

  @Override
  public void delivered(CdcOffset offset, List<ValueFailure> failures) {
    withRaw.incrementAndGet();
    for (ValueFailure f : failures) {
      String key = f.table() + "." + f.column() + ":" + f.typeOid();
      long n = rawCounts.merge(key, 1L, Long::sum);
      if (isPowerOfTen(n)) {
        LOG.warn(
            "slot {}: column \"{}\" of {} (type {}, oid {}) delivered undecoded as its {} ({} such"
                + " value(s) so far), event {} of transaction xid {} (commit LSN {}, end LSN {}):"
                + " {}",
            slot,
            f.column(),
            f.table(),
            f.typeName(),
            Integer.toUnsignedString(f.typeOid()),
            f.binary() ? "binary bytes" : "text",
            n,
            offset.eventIndex(),
            offset.xid(),
            offset.commitLsn(),
            offset.txEndLsn(),
            f.reason());
      }
    }
  }

  private static boolean isPowerOfTen(long n) {
    while (n >= 10 && n % 10 == 0) {
      n /= 10;
    }
    return n == 1;
  }

  @Override
  public void skipped(CdcOffset offset, ValueDecodingException e) {
    ValueFailure f = e.failure();
    skipped.incrementAndGet();
    LOG.warn(
        "slot {}: skipped event {} of transaction xid {} (commit LSN {}, end LSN {}): column \"{}\""
            + " of {} (type {}, oid {}) cannot be decoded: {}",
        slot,
        offset.eventIndex(),
        offset.xid(),
        offset.commitLsn(),
        offset.txEndLsn(),
        f.column(),
        f.table(),
        f.typeName(),
        Integer.toUnsignedString(f.typeOid()),
        f.reason());
    coordinator.acknowledge(offset);
  }
}
