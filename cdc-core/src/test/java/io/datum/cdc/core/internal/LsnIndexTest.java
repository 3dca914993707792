package io.datum.cdc.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** The open-addressing index behaves as a HashMap under random puts, gets and removes. */
class LsnIndexTest {

  @Property(tries = 50)
  void behavesLikeAHashMap(@ForAll long seed) {
    Random random = new Random(seed);
    LsnIndex index = new LsnIndex(16);
    Map<Long, Long> model = new HashMap<>();
    // few distinct keys with colliding low bits, so that probe chains and deletions interact
    long[] keys = new long[300];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = (random.nextInt(1 << 20) + 1L) << (random.nextBoolean() ? 32 : 4);
    }
    for (int op = 0; op < 5000; op++) {
      long key = keys[random.nextInt(keys.length)];
      switch (random.nextInt(3)) {
        case 0 -> {
          long value = random.nextInt(1_000_000);
          index.put(key, value);
          model.put(key, value);
        }
        case 1 -> {
          index.remove(key);
          model.remove(key);
        }
        default -> assertEquals(model.getOrDefault(key, -1L).longValue(), index.get(key));
      }
      assertEquals(model.size(), index.size());
    }
    for (long key : keys) {
      assertEquals(model.getOrDefault(key, -1L).longValue(), index.get(key));
    }
  }
}
