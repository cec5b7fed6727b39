# SPDX-License-Identifier: Apache-2.0
"""gdb script (gdb -p PID -batch -x arena_pages.py): how the pages of each glibc malloc arena are used.

For every arena other than the main one: the threads whose malloc goes to it (glibc's
thread_arena), the size of its heap, its resident pages (/proc/PID/pagemap) and, of those, the
pages on which chunks in use cover less than 1 KiB ("sparse") or nothing ("empty": only free
memory, kept resident by a free chunk's header, since malloc_trim gives back only whole pages no
header is on, or part of the top chunk). One line per arena:

  ARENA owners=<thread names, ';'-separated> size=<KiB> resident=<KiB> sparse=<KiB> empty=<KiB> in_use_chunks=<n> top=<KiB> top_resident=<KiB>

top is the arena's top chunk (the free end of its heap), top_resident its resident pages: malloc_trim
does not give those back in an arena other than the main one. Before the arenas, one line with glibc's
thresholds (they grow when a large mmapped block is freed):

  MALLOC trim_threshold=<bytes> mmap_threshold=<bytes>

Needs glibc's debug symbols (Debian: libc6-dbg) for thread_arena and the arena structures."""
import gdb
import struct

HEAP_MAX = 64 * 1024 * 1024  # glibc's HEAP_MAX_SIZE on x86-64: heaps are aligned to it
PAGE = 4096


def number(expr):
    return int(gdb.parse_and_eval(expr))


def main():
    inferior = gdb.selected_inferior()
    owners = {}
    for thread in inferior.threads():
        thread.switch()
        try:
            arena = number("(unsigned long)thread_arena")
        except gdb.error:
            continue
        owners.setdefault(arena, []).append((thread.name or "?").replace(" ", "_"))
    print("MALLOC trim_threshold=%d mmap_threshold=%d" % (
        number("mp_.trim_threshold"), number("mp_.mmap_threshold")))
    state_size = number("sizeof(struct malloc_state)")
    main_arena = number("(unsigned long)&main_arena")
    with open("/proc/%d/pagemap" % inferior.pid, "rb") as pagemap:
        arena = number("(unsigned long)main_arena.next")
        while arena != main_arena:
            heap = arena & ~(HEAP_MAX - 1)
            top = number("(unsigned long)((struct malloc_state*)%d)->top" % arena)
            end = heap + number("((heap_info*)%d)->size" % heap)
            pages = (end - heap + PAGE - 1) // PAGE
            pagemap.seek((heap // PAGE) * 8)
            entries = pagemap.read(8 * pages)
            resident = [(struct.unpack_from("<Q", entries, 8 * i)[0] >> 63) & 1
                        for i in range(pages)]
            # Only resident pages are read: reading another page would map it (the zero page) and
            # count it as resident in the next walk. Chunk headers are never on a page that is
            # not resident (malloc_trim gives back only pages no header is on).
            memory = bytearray(end - heap)
            page = 0
            while page < pages:
                if not resident[page]:
                    page += 1
                    continue
                run = page
                while run < pages and resident[run]:
                    run += 1
                lo = heap + page * PAGE
                hi = min(end, heap + run * PAGE)
                memory[lo - heap:hi - heap] = bytes(inferior.read_memory(lo, hi - lo))
                page = run
            used = [0] * pages
            chunks = 0
            chunk = (arena + state_size + 15) & ~15  # the first chunk follows the arena's state
            while chunk < top and chunk + 16 <= end:
                if not resident[(chunk - heap) // PAGE]:
                    break  # not a chunk header: the walk lost its way, stop rather than guess
                size = struct.unpack_from("<Q", memory, chunk - heap + 8)[0] & ~7
                if size < 16 or chunk + size > end:
                    break
                following = chunk + size
                # A chunk is in use when the next chunk's PREV_INUSE bit says so (the top chunk's
                # too, for the last one).
                in_use = (struct.unpack_from("<Q", memory, following - heap + 8)[0] & 1
                          if following + 16 <= end else 1)
                if in_use:
                    chunks += 1
                    for page in range((chunk - heap) // PAGE, (following - 1 - heap) // PAGE + 1):
                        lo = max(chunk, heap + page * PAGE)
                        hi = min(following, heap + (page + 1) * PAGE)
                        used[page] += hi - lo
                chunk = following
            sparse = sum(1 for p in range(pages) if resident[p] and used[p] < 1024)
            empty = sum(1 for p in range(pages) if resident[p] and used[p] == 0)
            top_page = (top - heap + PAGE - 1) // PAGE
            print("ARENA owners=%s size=%d resident=%d sparse=%d empty=%d in_use_chunks=%d "
                  "top=%d top_resident=%d" % (
                      ";".join(sorted(owners.get(arena, ["-"]))), (end - heap) // 1024,
                      sum(resident) * 4, sparse * 4, empty * 4, chunks, (end - top) // 1024,
                      sum(resident[top_page:]) * 4))
            arena = number("(unsigned long)((struct malloc_state*)%d)->next" % arena)


main()
