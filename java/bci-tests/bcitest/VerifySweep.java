// SPDX-License-Identifier: Apache-2.0
package bcitest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Loads and links every class named in an index file written by the bci tests (lines
 * "C <number> <module> <binary name>"), on a JVM whose modules are patched with the instrumented
 * classes and that verifies every class. Linking runs the verifier; nothing is initialized.
 * Prints one line per failure and a summary line; VerifyError and ClassFormatError are counted
 * apart from other linkage problems (missing optional classes and the like).
 */
public final class VerifySweep {
  public static void main(String[] args) throws IOException {
    List<String> lines = Files.readAllLines(Path.of(args[0]));
    int checked = 0;
    int verifyErrors = 0;
    int formatErrors = 0;
    int otherErrors = 0;
    int printedOther = 0;
    for (String line : lines) {
      if (!line.startsWith("C ")) continue;
      String[] parts = line.split(" ");
      String module = parts[2];
      String name = parts[3];
      Optional<Module> m = ModuleLayer.boot().findModule(module);
      if (m.isEmpty()) {
        otherErrors++;
        if (printedOther++ < 20) System.out.println("OTHER " + name + ": module " + module + " not in the boot layer");
        continue;
      }
      checked++;
      try {
        Class<?> c = Class.forName(name, false, m.get().getClassLoader());
        // Links (and so verifies) the class before reflecting on its constructors.
        c.getDeclaredConstructors();
      } catch (VerifyError e) {
        verifyErrors++;
        System.out.println("VERIFY " + name + ": " + e.getMessage());
      } catch (ClassFormatError e) {
        formatErrors++;
        System.out.println("FORMAT " + name + ": " + e);
      } catch (Throwable t) {
        otherErrors++;
        if (printedOther++ < 20) System.out.println("OTHER " + name + ": " + t);
      }
    }
    System.out.println("SUMMARY checked=" + checked + " verify_errors=" + verifyErrors
        + " format_errors=" + formatErrors + " other_errors=" + otherErrors);
  }
}
