; hale program image v2, entry app.hl

files:
  0 app.hl

types:
  t6 topic Retry { id: int, attempt: int }

consts:

prims:

topics:
  T0 Retry payload Retry subscribers [0]

loci:
  L0 Jobs slots 1 init f0(Jobs.init) start f1(Jobs.on start)
    state s0 base: int
    on Retry f2(Jobs.on Retry)

instances:
  I0 Jobs locus L0 spawn f3(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 Jobs.init (init) params 0 slots 0 frame 1
  0000  loadint       r0, 250                        ; app.hl:5:21
  0001  storestate    s0(base), r0                   ; app.hl:5:5
  0002  ret.void                                     ; app.hl:4:7

func f1 Jobs.on start (start) params 0 slots 0 frame 3
  0000  loadint       r0, 1                          ; app.hl:8:29
  0001  loadint       r1, 0                          ; app.hl:8:41
  0002  loadint       r2, 1000                       ; app.hl:8:51
  0003  publish.after T0(Retry), r0, r2              ; app.hl:8:9
  0004  ret.void                                     ; app.hl:7:5

func f2 Jobs.on Retry (handler) params 1 slots 1 frame 5
  ; r0 r: Retry
  0000  field         r1, r0, 1                      ; app.hl:12:12
  0001  jge.int.k     r1, 3, @0010                   ; app.hl:12:22
  0002  field         r1, r0, 0                      ; app.hl:13:57
  0003  field         r2, r0, 1                      ; app.hl:13:38
  0004  add.int.k     r2, r2, 1                      ; app.hl:13:48
  0005  loadstate     r3, s0(base)                   ; app.hl:13:70
  0006  field         r4, r0, 1                      ; app.hl:13:78
  0007  add.int.k     r4, r4, 1                      ; app.hl:13:88
  0008  mul.int       r3, r3, r4                     ; app.hl:13:75
  0009  publish.after T0(Retry), r1, r3              ; app.hl:13:13
  0010  ret.void                                     ; app.hl:11:5

func f3 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:19:5
