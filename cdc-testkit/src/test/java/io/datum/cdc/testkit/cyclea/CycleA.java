package io.datum.cdc.testkit.cyclea;

import io.datum.cdc.testkit.cycleb.CycleB;

/** Half of a package cycle planted for {@code PackageCyclesTest}. */
public final class CycleA {
  private CycleA() {}

  /** Uses the other half. */
  public static CycleB other() {
    return null;
  }
}
