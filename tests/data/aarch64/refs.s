// One instruction or data word per relocation type emu implements, against absolute
// symbols that gen_refs.py defines with --defsym at addresses chosen to exercise signs,
// addends, scaling and the far ends of each range.  See README.md.
        .text
        .globl  _start
_start:
        bl      call_fwd                    // R_AARCH64_CALL26, +~128 MiB
        bl      call_back+8                 // R_AARCH64_CALL26, backwards, addend
        b       jump_fwd                    // R_AARCH64_JUMP26
        b       call_back                   // R_AARCH64_JUMP26, backwards
        b.eq    cond_fwd                    // R_AARCH64_CONDBR19
        cbz     x0, cond_back               // R_AARCH64_CONDBR19, backwards
        tbz     x1, #3, tst_fwd             // R_AARCH64_TSTBR14
        tbnz    w1, #31, tst_back           // R_AARCH64_TSTBR14, backwards
        ldr     x2, lit_fwd                 // R_AARCH64_LD_PREL_LO19
        adr     x3, adr_fwd                 // R_AARCH64_ADR_PREL_LO21
        adr     x3, adr_back                // R_AARCH64_ADR_PREL_LO21, backwards, odd
        adrp    x4, far_up                  // R_AARCH64_ADR_PREL_PG_HI21, +~4 GiB
        adrp    x4, far_down                // R_AARCH64_ADR_PREL_PG_HI21, backwards
        adrp    x4, far_up+0x1000           // R_AARCH64_ADR_PREL_PG_HI21, addend crossing a page
        adrp    x4, :pg_hi21_nc:far_up      // R_AARCH64_ADR_PREL_PG_HI21_NC
        add     x5, x5, :lo12:data_b        // R_AARCH64_ADD_ABS_LO12_NC
        add     x5, x5, :lo12:data_q+0x24   // R_AARCH64_ADD_ABS_LO12_NC, addend
        ldrb    w6, [x5, :lo12:data_b]      // R_AARCH64_LDST8_ABS_LO12_NC
        strh    w6, [x5, :lo12:data_h]      // R_AARCH64_LDST16_ABS_LO12_NC
        ldr     w6, [x5, :lo12:data_w]      // R_AARCH64_LDST32_ABS_LO12_NC
        ldr     s6, [x5, :lo12:data_w]      // R_AARCH64_LDST32_ABS_LO12_NC, FP form
        ldr     x6, [x5, :lo12:data_x]      // R_AARCH64_LDST64_ABS_LO12_NC
        str     x6, [x5, :lo12:data_x+8]    // R_AARCH64_LDST64_ABS_LO12_NC, addend
        ldr     q6, [x5, :lo12:data_q]      // R_AARCH64_LDST128_ABS_LO12_NC
        movz    x7, #:abs_g0:small16        // R_AARCH64_MOVW_UABS_G0
        movk    x7, #:abs_g0_nc:big64       // R_AARCH64_MOVW_UABS_G0_NC
        movz    x7, #:abs_g1:mid32          // R_AARCH64_MOVW_UABS_G1
        movk    x7, #:abs_g1_nc:big64       // R_AARCH64_MOVW_UABS_G1_NC
        movz    x7, #:abs_g2:mid48          // R_AARCH64_MOVW_UABS_G2
        movk    x7, #:abs_g2_nc:big64       // R_AARCH64_MOVW_UABS_G2_NC
        movk    x7, #:abs_g3:big64          // R_AARCH64_MOVW_UABS_G3
        adrp    x8, :got:got_sym            // R_AARCH64_ADR_GOT_PAGE
        ldr     x8, [x8, :got_lo12:got_sym] // R_AARCH64_LD64_GOT_LO12_NC
        ret

        .data
        .quad   big64                       // R_AARCH64_ABS64
        .quad   far_down-0x200              // R_AARCH64_ABS64, addend below zero
        .word   mid32                       // R_AARCH64_ABS32
        .word   small16                     // R_AARCH64_ABS32
        .hword  small16                     // R_AARCH64_ABS16
        .hword  0
        .quad   far_up - .                  // R_AARCH64_PREL64
        .quad   far_down - .                // R_AARCH64_PREL64, negative
        .word   call_back - .               // R_AARCH64_PREL32, negative
        .word   call_fwd - .                // R_AARCH64_PREL32
        .hword  prel16_near - .             // R_AARCH64_PREL16
        .hword  prel16_back - .             // R_AARCH64_PREL16, negative
