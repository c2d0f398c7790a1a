; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 type P { x: int }
  t7 [int]

consts:
  k0 string " has "
  k1 string " and "
  k2 string " ("
  k3 string ") "
  k4 string " "
  k5 string "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff \x00@\x00\x05\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff \x00\xc0\x04\b\x00\x02\x00\xff\xff\xff\xff\xff\xff\xff\xff \x00@\x01\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff*\x00`\x00\t\x00\x00\x00"
  k6 string "\xff\xff\xff\xff\xff\xff\xff\xff"
  k7 string "{braces}"
  k8 string "bob"
  k9 float 3.14159

prims:

topics:

loci:
  L0 L slots 0 init f1(L.init) start f2(L.on start)

instances:
  I0 L locus L0 spawn f3(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 show (fn) params 4 slots 8 frame 20 -> string
  ; r0 name: string
  ; r1 n: int
  ; r2 f: float
  ; r3 p: P
  ; r4 all: string
  ; r5 lone: string
  ; r6 same: string
  ; r7 text: string
  0000* move          r8, r0                         ; app.hl:5:67
  0001  loadk         r9, k0(" has ")                ; app.hl:5:22
  0002  move          r10, r1                        ; app.hl:5:73
  0003  loadk         r11, k1(" and ")               ; app.hl:5:22
  0004  move          r12, r2                        ; app.hl:5:76
  0005  loadk         r13, k2(" (")                  ; app.hl:5:22
  0006  move          r14, r1                        ; app.hl:5:79
  0007  loadk         r15, k3(") ")                  ; app.hl:5:22
  0008  move          r16, r3                        ; app.hl:5:82
  0009  loadk         r17, k4(" ")                   ; app.hl:5:22
  0010  move          r19, r1                        ; app.hl:5:86
  0011  new.list      r18, r19, 1                    ; app.hl:5:85
  0012  format        r4, r8, k5("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff \x00@\x00\x05\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff \x00\xc0\x04\b\x00\x02\x00\xff\xff\xff\xff\xff\xff\xff\xff \x00@\x01\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff*\x00`\x00\t\x00\x00\x00") ; app.hl:5:22
  0013* move          r8, r1                         ; app.hl:6:29
  0014  format        r5, r8, k6("\xff\xff\xff\xff\xff\xff\xff\xff") ; app.hl:6:23
  0015* move          r6, r0                         ; app.hl:7:29
  0016* loadk         r7, k7("{braces}")             ; app.hl:8:23
  0017* concat.str    r8, r4, r5                     ; app.hl:9:16
  0018  concat.str    r8, r8, r6                     ; app.hl:9:23
  0019  concat.str    r8, r8, r7                     ; app.hl:9:30
  0020  ret           r8                             ; app.hl:9:5

func f1 L.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:11:7

func f2 L.on start (start) params 0 slots 0 frame 6
  0000* loadk         r1, k8("bob")                  ; app.hl:12:27
  0001  loadint       r2, -42                        ; app.hl:12:34
  0002  loadk         r3, k9(3.14159)                ; app.hl:12:39
  0003  loadint       r5, 1                          ; app.hl:12:55
  0004  new.struct    r4, r5, t6(P)                  ; app.hl:12:48
  0005  call          r1, f0(show)                   ; app.hl:12:22
  0006  callb         r0, print, r1                  ; app.hl:12:16
  0007  ret.void                                     ; app.hl:12:5

func f3 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:14:8
