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

  /**
   * One bit per word of {@link #bits} (ring index {@code i}: long {@code i / 64}, bit {@code i %
   * 64}), 0 only when the word holds no bit of its lap: an acknowledgement that finds its word
   * empty sets it (atomically) before its compare-and-set, so whoever sees a bit of the word sees
   * the mark, and a checkpoint that skips the words marked 0 still sees every acknowledgement that
   * returned before it, also one that returned because it found its bit set by a call still inside,
   * and one that set a bit beside the first while the call setting that was descheduled. A mark
   * whose compare-and-set then fails is harmless (1 is the conservative value). Cleared by {@link
   * #startLap} before a word is tagged for a lap, never cleared otherwise. Replaced before {@link
   * #bits} is replaced, so an acknowledgement that sees a new ring sees a summary at least as new;
   * a bit set in a newer summary than its ring's is harmless (1 is the conservative value). A grown
   * ring's summary is marked for the words that brought bits along, under the coordinator's monitor
   * (so before any checkpoint); a reset ring's starts empty (acknowledgements of the old positions
   * go elsewhere).
   */
  volatile long[] occupied;

  /** The first event position not known to be acknowledged; written under the monitor. */
  volatile long prefix;

  /**
   * The newest word (position / 48) holding an acknowledgement, raised before the bit is set (as
   * {@link #occupied}); only grows.
   */
  @SuppressWarnings("unused") // through MAX_ACKED_WORD
  volatile long maxAckedWord = -1;

  /**
   * The first position of the first word not tagged for its lap yet (see {@link #startLaps}); the
   * registering thread's.
   */
  long nextWordStart;

  /**
   * @param words the ring's first length, a power of two
   */
  AckRing(int words) {
    occupied = new long[summaryLength(words)];
    bits = new long[words];
  }

  /** The length of the summary of a ring of {@code words} words. */
  static int summaryLength(int words) {
    return Math.max(1, words / 64);
  }

  /**
   * Marks ring index {@code i} as holding an acknowledgement: called before a compare-and-set that
   * sets the first bit of its word's lap (see {@link #occupied}).
   */
  final void noteOccupied(int i) {
    WORDS.getAndBitwiseOr(occupied, i >>> 6, 1L << (i & 63));
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
        noteSetting(i, w, word);
        long witness = (long) WORDS.compareAndExchange(ring, i, word, word | bit);
        if (witness == word) {
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
        // RETIRED reads as tag 0xFFFF with every bit set: on a replaced ring it must send this
        // call to the new ring, not end it as if the bits were set (lap 65,535 of the ring)
        while (!done && word != RETIRED && (word >>> EVENTS_PER_WORD) == tag) {
          if ((word & mask) == mask) {
            done = true;
            break;
          }
          noteSetting(i, w, word);
          long witness = (long) WORDS.compareAndExchange(ring, i, word, word | mask);
          if (witness == word) {
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

  /**
   * Notes, before a compare-and-set of ring index {@code i} (word {@code w}) from {@code word},
   * what a checkpoint needs to see the bit: the summary mark if the word is empty, the newest
   * acknowledged word.
   */
  final void noteSetting(int i, long w, long word) {
    if ((word & EVENT_BITS) == 0) {
      noteOccupied(i);
    }
    noteAcknowledged(w);
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
   * Makes room for the positions up to {@code last} (exclusive): grows the ring if they do not fit
   * in one lap from the prefix's word, keeping every bit set from the prefix up to {@code
   * nextEvent}. Under the coordinator's monitor.
   *
   * @return the end of the positions that fit now; it only grows, since the prefix does
   */
  final long makeRoom(long last, long nextEvent) {
    long words = wordOf(last - 1) - wordOf(prefix) + 1;
    if (words > bits.length) {
      growBits(words, nextEvent);
    }
    return (wordOf(prefix) + bits.length) * EVENTS_PER_WORD;
  }

  /**
   * Tags the words the positions up to {@code last} (exclusive) start for their laps, every bit
   * clear (see {@link #startLap}), so that acknowledgements of those positions find them. The
   * registering thread only, before it publishes the registration of those positions, and only for
   * positions {@link #makeRoom} made room for.
   */
  final void startLaps(long last) {
    long[] ring = bits;
    long w = nextWordStart / EVENTS_PER_WORD;
    for (; w * EVENTS_PER_WORD < last; w++) {
      startLap(ring, w);
    }
    nextWordStart = w * EVENTS_PER_WORD;
  }

  /**
   * Replaces the bit ring with one of at least {@code words} words, keeping every bit set from the
   * prefix up to {@code nextEvent}. Under the coordinator's monitor.
   */
  private void growBits(long words, long nextEvent) {
    long[] old = bits;
    int length = old.length;
    while (length < words) {
      length *= 2;
    }
    long fromWord = wordOf(prefix);
    long toWord = wordOf(Math.max(nextEvent, prefix + 1) - 1); // inclusive
    long[] grown = tagged(length, fromWord, toWord);
    // the summary before the ring (see occupied); empty, and marked below for the words that bring
    // bits from the old ring, before the monitor is released: no checkpoint is collected in between
    long[] summary = new long[summaryLength(length)];
    occupied = summary;
    bits = grown; // published first: a compare-and-set that fails on the retired words retries here
    retireInto(old, grown, summary, fromWord, toWord);
  }

  /**
   * Replaces the bit ring at a reconnect, when the positions change, with an empty one of the same
   * length (word {@code wordOf(nextEvent)} tagged if a registration started it) and a fresh
   * summary, then retires {@code count} words of the old ring from {@code fromWord} on and returns
   * what they held (see {@link #retire}). Under the coordinator's monitor, after it published its
   * new epoch: an acknowledgement that sees the new ring sees the new epoch after its
   * compare-and-set, and looks again.
   */
  final long[] resetBits(long nextEvent, long fromWord, int count) {
    long[] old = bits;
    long w = wordOf(nextEvent);
    occupied = new long[summaryLength(old.length)]; // before the ring: see occupied
    bits = nextEvent % EVENTS_PER_WORD != 0 ? tagged(old.length, w, w) : new long[old.length];
    return retire(old, fromWord, count);
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

  /**
   * Returns the first position in [from, limit) whose bit is set, or limit, skipping the words
   * {@code summary} marks empty, 64 at a time (see {@link #occupied}).
   *
   * @param ring the bits
   * @param summary the ring's {@link #occupied} summary
   */
  static long nextSet(long[] ring, long[] summary, long from, long limit) {
    long p = from;
    while (p < limit) {
      long w = wordOf(p);
      int i = index(ring, w);
      long marks = (long) WORDS.getVolatile(summary, i >>> 6) >>> (i & 63);
      if (marks == 0) {
        // no word from here to the end of its group of 64 (which does not wrap: the ring's
        // length is a multiple of 64) holds an acknowledgement
        p = (w + 64 - (i & 63)) * EVENTS_PER_WORD;
        continue;
      }
      int empty = Long.numberOfTrailingZeros(marks);
      if (empty > 0) {
        p = (w + empty) * EVENTS_PER_WORD;
        continue;
      }
      long word = (long) WORDS.getVolatile(ring, i);
      long set = word & EVENT_BITS & (-1L << bitOf(p));
      if (set != 0) {
        return Math.min(limit, w * EVENTS_PER_WORD + Long.numberOfTrailingZeros(set));
      }
      p = (w + 1) * EVENTS_PER_WORD;
    }
    return limit;
  }

  /**
   * Tags word {@code word} for its lap with every bit clear (release: readers see the tag), after
   * marking it empty in {@link #occupied}: no acknowledgement of the new lap can come before its
   * transaction is registered, after this. The registering thread only.
   */
  final void startLap(long[] ring, long word) {
    int i = index(ring, word);
    WORDS.getAndBitwiseAnd(occupied, i >>> 6, ~(1L << (i & 63)));
    WORDS.setRelease(ring, i, tag(ring, word) << EVENTS_PER_WORD);
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
  static void retireInto(long[] old, long[] grown, long[] summary, long fromWord, long toWord) {
    for (long w = fromWord; w <= toWord; w++) {
      long taken = (long) WORDS.getAndSet(old, index(old, w), RETIRED);
      if ((taken >>> EVENTS_PER_WORD) == tag(old, w) && (taken & EVENT_BITS) != 0) {
        int i = index(grown, w);
        WORDS.getAndBitwiseOr(grown, i, taken & EVENT_BITS);
        WORDS.getAndBitwiseOr(summary, i >>> 6, 1L << (i & 63));
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
