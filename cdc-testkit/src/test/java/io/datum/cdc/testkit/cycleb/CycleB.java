package io.datum.cdc.testkit.cycleb;

import io.datum.cdc.testkit.cyclea.CycleA;

/** The other half of the cycle planted for {@code PackageCyclesTest}. */
public final class CycleB {
  private CycleB() {}

  /** Uses the first half. */
  public static CycleA other() {
    return null;
  }
}
