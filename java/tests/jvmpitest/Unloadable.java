// SPDX-License-Identifier: Apache-2.0
package jvmpitest;

import java.util.function.Supplier;

/** Loaded only by UnloadProgram's own class loader, so that it can be unloaded. */
public class Unloadable implements Supplier<String> {
  @Override
  public String get() {
    return "unloadable-hello";
  }
}
