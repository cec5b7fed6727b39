// SPDX-License-Identifier: Apache-2.0
package attachtest;

import java.nio.file.Files;
import java.nio.file.Path;

// A program started without any agent, for attach to find: it holds a known number of Marker
// objects live (args[1], for heap dumps) and spends its CPU in spin() (for profiles) until the
// file args[0] exists, then prints its checksum and exits.
public class Spinner {
  static final class Marker {
    final int index;

    Marker(int index) {
      this.index = index;
    }
  }

  static Marker[] markers;

  static long spin(long seed) {
    long x = seed;
    for (int i = 0; i < 2_000_000; ++i) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  public static void main(String[] args) throws Exception {
    final Path stop = Path.of(args[0]);
    final int count = Integer.parseInt(args[1]);
    markers = new Marker[count];
    for (int i = 0; i < count; ++i) markers[i] = new Marker(i);
    System.out.println("ready " + ProcessHandle.current().pid());
    System.out.flush();
    long x = 1;
    while (!Files.exists(stop)) x = spin(x);
    System.out.println("done " + markers.length + " " + (x == 42 ? "!" : "."));
  }
}
