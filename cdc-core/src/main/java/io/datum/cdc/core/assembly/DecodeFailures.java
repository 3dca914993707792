package io.datum.cdc.core.assembly;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import java.util.List;

/**
 * Where {@link EventDelivery} reports the changes whose column values did not decode, under the
 * source's decode-error policy. Called on the replication thread.
 */
public interface DecodeFailures {

  /** Stops at the first value that does not decode (the decoder's exception propagates). */
  DecodeFailures STOP =
      new DecodeFailures() {
        @Override
        public boolean skips() {
          return false;
        }

        @Override
        public void delivered(CdcOffset offset, List<ValueFailure> failures) {}

        @Override
        public void skipped(CdcOffset offset, ValueDecodingException e) {
          throw e;
        }
      };

  /**
   * Returns true if a change with a value that does not decode is skipped (the {@code SKIP}
   * policy), false if the decoder's exception stops the source.
   */
  boolean skips();

  /**
   * A change is delivered with raw values (the {@code RAW} policy).
   *
   * @param offset the event's offset
   * @param failures the values kept raw, in column order, at least one
   */
  void delivered(CdcOffset offset, List<ValueFailure> failures);

  /**
   * A change is skipped (the {@code SKIP} policy): it is not delivered, and the implementation
   * acknowledges its offset so that the watermark can pass it.
   *
   * @param offset the skipped event's offset
   * @param e the failure of its first value that did not decode
   */
  void skipped(CdcOffset offset, ValueDecodingException e);
}
