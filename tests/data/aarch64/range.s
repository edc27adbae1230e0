// Targets for the out-of-range tests: the test gives these symbols addresses no
// linker could reach (see test_aarch64_relocations.py); built as README.md says.
        .text
        bl      far_call                    // R_AARCH64_CALL26
        adrp    x0, far_page                // R_AARCH64_ADR_PREL_PG_HI21
        ldr     x1, [x0, :lo12:odd_quad]    // R_AARCH64_LDST64_ABS_LO12_NC
        ret
