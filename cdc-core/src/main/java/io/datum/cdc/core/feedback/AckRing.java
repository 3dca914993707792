package io.datum.cdc.core.feedback;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The acknowledgement bits of a {@link FeedbackCoordinator}: one bit per event position in a ring
 * of {@code long} words, each holding {@value #EVENTS_PER_WORD} events and, in its top 16 bits, a
 * tag saying which lap of the ring it holds (1.33 bits per ring slot). Word {@code w} (positions
 * {@code [48w, 48w + 48)}) lives at index {@code w mod length}; its tag is {@code w / length mod
 * 2^16}. A word tagged for another lap holds no bits of this one, so a late compare-and-set on a
 * reused word fails.
 *
 * <p>This base class of the coordinator holds the current ring ({@link #bits}, replaced when it
 * grows or resets; the words of a replaced ring are overwritten with {@link #RETIRED}, which no tag
 * matches), the acknowledged prefix and the newest acknowledged word, and the lock-free writes;
 * static functions read a given ring. The coordinator extends it rather than holding it, so the
 * acknowledgement path reads these fields with no extra indirection.
 */
abstract class AckRing {

  /** Events per ring word; the word's top 16 bits are its tag. */
  static final int EVENTS_PER_WORD = 48;

  /** The event bits of a word. */
  static final long EVENT_BITS = (1L << EVENTS_PER_WORD) - 1;

  private static final long TAG_BITS = 0xFFFF;

  /** Written over every word of a replaced ring, so that a late compare-and-set on it fails. */
  static final long RETIRED = -1L;

  static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private static final VarHandle MAX_ACKED_WORD;

  static {
    try {
      MAX_ACKED_WORD =
          MethodHandles.lookup().findVarHandle(AckRing.class, "maxAckedWord", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The acknowledgement bits; a power of two of words. Replaced when it grows or resets. */
  volatile long[] bits;

  /** The first event position not known to be acknowledged; written under the monitor. */
  volatile long prefix;

  /** The newest word (position / 48) holding an acknowledgement; only grows. */
  @SuppressWarnings("unused") // through MAX_ACKED_WORD
  volatile long maxAckedWord = -1;

  /**
   * @param words the ring's first length, a power of two
   */
  AckRing(int words) {
    bits = new long[words];
  }

  /**
   * Sets the bit of event {@code position}: one compare-and-set, retried on the new ring if the
   * ring was replaced meanwhile.
   *
   * @return true if this call set it; false if it was set before or the word holds a later lap (the
   *     event was acknowledged and passed long ago)
   */
  final boolean setBit(long position) {
    long w = wordOf(position);
    long bit = 1L << bitOf(position);
    while (true) {
      long[] ring = bits;
      int i = index(ring, w);
      long tag = tag(ring, w);
      long word = (long) WORDS.getVolatile(ring, i);
      if (position < prefix) {
        // acknowledged and passed (the tag alone repeats after 65,536 laps of the ring): the
        // prefix that let this word be tagged for a later lap is visible after reading the word
        return false;
      }
      while ((word >>> EVENTS_PER_WORD) == tag && (word & bit) == 0) {
        long witness = (long) WORDS.compareAndExchange(ring, i, word, word | bit);
        if (witness == word) {
          noteAcknowledged(w);
          return true;
        }
        word = witness;
      }
      if (bits == ring) {
        return false;
      }
    }
  }

  /** Sets the bits of events {@code [first, first + count)}; true if any was not set before. */
  final boolean setBits(long first, int count) {
    boolean any = false;
    long p = first;
    long last = first + count;
    while (p < last) {
      long w = wordOf(p);
      int from = bitOf(p);
      int to = (int) Math.min(EVENTS_PER_WORD, last - w * EVENTS_PER_WORD);
      long mask = ((1L << to) - 1) & (-1L << from); // to <= 48
      while (true) {
        long[] ring = bits;
        int i = index(ring, w);
        long tag = tag(ring, w);
        long word = (long) WORDS.getVolatile(ring, i);
        boolean done = w * EVENTS_PER_WORD + to <= prefix; // passed: see setBit
        while (!done && (word >>> EVENTS_PER_WORD) == tag) {
          if ((word & mask) == mask) {
            done = true;
            break;
          }
          long witness = (long) WORDS.compareAndExchange(ring, i, word, word | mask);
          if (witness == word) {
            noteAcknowledged(w);
            any = true;
            done = true;
            break;
          }
          word = witness;
        }
        if (done || bits == ring) {
          break;
        }
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return any;
  }

  /** Raises {@link #maxAckedWord} to {@code word} if it is below. */
  final void noteAcknowledged(long word) {
    long max = maxAckedWord;
    while (word > max) {
      long witness = (long) MAX_ACKED_WORD.compareAndExchange(this, max, word);
      if (witness == max) {
        return;
      }
      max = witness;
    }
  }

  /**
   * Replaces the bit ring with one of at least {@code words} words, keeping every bit set from the
   * prefix up to {@code nextEvent}. Under the coordinator's monitor.
   */
  void growBits(long words, long nextEvent) {
    long[] old = bits;
    int length = old.length;
    while (length < words) {
      length *= 2;
    }
    long fromWord = wordOf(prefix);
    long toWord = wordOf(Math.max(nextEvent, prefix + 1) - 1); // inclusive
    long[] grown = tagged(length, fromWord, toWord);
    bits = grown; // published first: a compare-and-set that fails on the retired words retries here
    retireInto(old, grown, fromWord, toWord);
  }

  /** Returns the word holding event {@code position}. */
  static long wordOf(long position) {
    return position / EVENTS_PER_WORD;
  }

  /** Returns the bit of event {@code position} in its word. */
  static int bitOf(long position) {
    return (int) (position - wordOf(position) * EVENTS_PER_WORD);
  }

  /** Returns the index of word {@code word} in {@code ring}. */
  static int index(long[] ring, long word) {
    return (int) word & (ring.length - 1);
  }

  /** Returns the tag of a word: which lap of this ring it holds. */
  static long tag(long[] ring, long word) {
    return (word >>> Integer.numberOfTrailingZeros(ring.length)) & TAG_BITS;
  }

  /** Returns whether event {@code position}'s bit is set (the word's tag is not checked). */
  static boolean isSet(long[] ring, long position) {
    long word = (long) WORDS.getVolatile(ring, index(ring, wordOf(position)));
    return (word & (1L << bitOf(position))) != 0;
  }

  /** Returns the first position in [from, limit) whose bit is clear, or limit. */
  static long nextClear(long[] ring, long from, long limit) {
    long p = from;
    while (p < limit) {
      long w = wordOf(p);
      long word = (long) WORDS.getVolatile(ring, index(ring, w));
      long clear = ~word & EVENT_BITS & (-1L << bitOf(p));
      if (clear != 0) {
        return Math.min(limit, w * EVENTS_PER_WORD + Long.numberOfTrailingZeros(clear));
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return limit;
  }

  /** Returns the first position in [from, limit) whose bit is set, or limit. */
  static long nextSet(long[] ring, long from, long limit) {
    long p = from;
    while (p < limit) {
      long w = wordOf(p);
      long word = (long) WORDS.getVolatile(ring, index(ring, w));
      long set = word & EVENT_BITS & (-1L << bitOf(p));
      if (set != 0) {
        return Math.min(limit, w * EVENTS_PER_WORD + Long.numberOfTrailingZeros(set));
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return limit;
  }

  /** Tags word {@code word} for its lap with every bit clear (release: readers see the tag). */
  static void startLap(long[] ring, long word) {
    WORDS.setRelease(ring, index(ring, word), tag(ring, word) << EVENTS_PER_WORD);
  }

  /**
   * Returns a new ring of {@code length} words with words {@code [fromWord, toWord]} tagged and
   * clear. Publish it, then {@link #retireInto} the old one.
   */
  static long[] tagged(int length, long fromWord, long toWord) {
    long[] ring = new long[length];
    for (long w = fromWord; w <= toWord; w++) {
      ring[index(ring, w)] = tag(ring, w) << EVENTS_PER_WORD;
    }
    return ring;
  }

  /**
   * Retires words {@code [fromWord, toWord]} of a replaced ring and ORs the bits they held into
   * {@code grown}: a compare-and-set racing with this either landed before (and is merged) or fails
   * on {@link #RETIRED} and retries on the ring published before this call.
   */
  static void retireInto(long[] old, long[] grown, long fromWord, long toWord) {
    for (long w = fromWord; w <= toWord; w++) {
      long taken = (long) WORDS.getAndSet(old, index(old, w), RETIRED);
      if ((taken >>> EVENTS_PER_WORD) == tag(old, w)) {
        WORDS.getAndBitwiseOr(grown, index(grown, w), taken & EVENT_BITS);
      }
    }
  }

  /**
   * Retires {@code count} words of a replaced ring from {@code fromWord} on and returns what they
   * held, in order (the caller reads them with {@link #isSetIn}).
   */
  static long[] retire(long[] old, long fromWord, int count) {
    long[] captured = new long[count];
    for (int i = 0; i < count; i++) {
      captured[i] = (long) WORDS.getAndSet(old, index(old, fromWord + i), RETIRED);
    }
    return captured;
  }

  /** Returns whether {@code position}'s bit is set in words captured by {@link #retire}. */
  static boolean isSetIn(long[] captured, long fromWord, long position) {
    long word = captured[(int) (wordOf(position) - fromWord)];
    return (word & (1L << bitOf(position))) != 0;
  }
}
