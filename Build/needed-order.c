// Build/needed-order.c: puts the DT_NEEDED entries of a 64-bit little-endian ELF file in a
// given order, in place.
//
//     needed-order FILE SONAME...
//
// The named libraries come first, in the order given; the file's other entries follow in
// their present order. Only the values of the existing DT_NEEDED slots are exchanged: no
// entry is added or removed, and no other byte of the file changes. Build/order-needed says
// why af wants this.

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *path, const char *message) {
    fprintf(stderr, "needed-order: %s: %s\n", path, message);
    return 1;
}

// The file offset of virtual address `address`, through the PT_LOAD segment that holds it.
static long offsetOf(const Elf64_Phdr *headers, int count, Elf64_Addr address) {
    for (int index = 0; index < count; index++) {
        const Elf64_Phdr *header = &headers[index];
        if (header->p_type == PT_LOAD && address >= header->p_vaddr && address < header->p_vaddr + header->p_filesz) {
            return (long)(address - header->p_vaddr + header->p_offset);
        }
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: needed-order FILE SONAME...\n");
        return 2;
    }
    const char *path = argv[1];
    FILE *file = fopen(path, "r+b");
    if (file == NULL) return fail(path, "cannot open");
    if (fseek(file, 0, SEEK_END) != 0) return fail(path, "cannot seek");
    long size = ftell(file);
    if (size < (long)sizeof(Elf64_Ehdr)) return fail(path, "not an ELF file");
    unsigned char *bytes = malloc((size_t)size);
    if (bytes == NULL) return fail(path, "out of memory");
    rewind(file);
    if (fread(bytes, 1, (size_t)size, file) != (size_t)size) return fail(path, "cannot read");

    const Elf64_Ehdr *elf = (const Elf64_Ehdr *)bytes;
    if (memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0 || elf->e_ident[EI_CLASS] != ELFCLASS64 ||
        elf->e_ident[EI_DATA] != ELFDATA2LSB) {
        return fail(path, "not a 64-bit little-endian ELF file");
    }
    if (elf->e_phoff == 0 || elf->e_phentsize != sizeof(Elf64_Phdr) ||
        elf->e_phoff + (Elf64_Off)elf->e_phnum * sizeof(Elf64_Phdr) > (Elf64_Off)size) {
        return fail(path, "bad program headers");
    }
    const Elf64_Phdr *headers = (const Elf64_Phdr *)(bytes + elf->e_phoff);
    const Elf64_Phdr *dynamic = NULL;
    for (int index = 0; index < elf->e_phnum; index++) {
        if (headers[index].p_type == PT_DYNAMIC) dynamic = &headers[index];
    }
    if (dynamic == NULL || dynamic->p_offset + dynamic->p_filesz > (Elf64_Off)size) return fail(path, "no dynamic section");
    Elf64_Dyn *entries = (Elf64_Dyn *)(bytes + dynamic->p_offset);
    size_t entryCount = dynamic->p_filesz / sizeof(Elf64_Dyn);

    Elf64_Addr stringsAddress = 0;
    Elf64_Xword stringsSize = 0;
    size_t needed[256];
    size_t neededCount = 0;
    for (size_t index = 0; index < entryCount && entries[index].d_tag != DT_NULL; index++) {
        if (entries[index].d_tag == DT_STRTAB) stringsAddress = entries[index].d_un.d_ptr;
        if (entries[index].d_tag == DT_STRSZ) stringsSize = entries[index].d_un.d_val;
        if (entries[index].d_tag == DT_NEEDED) {
            if (neededCount == sizeof needed / sizeof needed[0]) return fail(path, "too many DT_NEEDED entries");
            needed[neededCount++] = index;
        }
    }
    long strings = offsetOf(headers, elf->e_phnum, stringsAddress);
    if (strings < 0 || (Elf64_Off)strings + stringsSize > (Elf64_Off)size) return fail(path, "no dynamic string table");
    for (size_t slot = 0; slot < neededCount; slot++) {
        if (entries[needed[slot]].d_un.d_val >= stringsSize) return fail(path, "a DT_NEEDED name lies outside the string table");
    }

    // The new sequence of values: the named libraries first, then the rest as they were.
    Elf64_Xword values[256];
    int taken[256] = {0};
    size_t filled = 0;
    for (int argument = 2; argument < argc; argument++) {
        for (size_t slot = 0; slot < neededCount; slot++) {
            const char *name = (const char *)bytes + strings + entries[needed[slot]].d_un.d_val;
            if (!taken[slot] && strcmp(name, argv[argument]) == 0) {
                taken[slot] = 1;
                values[filled++] = entries[needed[slot]].d_un.d_val;
                break;
            }
        }
    }
    for (size_t slot = 0; slot < neededCount; slot++) {
        if (!taken[slot]) values[filled++] = entries[needed[slot]].d_un.d_val;
    }
    for (size_t slot = 0; slot < neededCount; slot++) entries[needed[slot]].d_un.d_val = values[slot];

    if (fseek(file, (long)dynamic->p_offset, SEEK_SET) != 0 ||
        fwrite(bytes + dynamic->p_offset, 1, dynamic->p_filesz, file) != dynamic->p_filesz || fclose(file) != 0) {
        return fail(path, "cannot write");
    }
    free(bytes);
    return 0;
}
