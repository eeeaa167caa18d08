! basic_f08.f90 -- the "basic" MPI-IO sequence, Fortran with 'use mpi_f08'.
!
! Same sequence as basic_c.c (see its header and expected.py):
!   open "shared.dat"; write_at_all(b=0); Allreduce x2; write_at_all(b=1);
!   Allreduce x2; write_at_all(b=2); write_at; Barrier; read_at_all;
!   read_at; close.
! Block b (0..2, 1024 bytes) at offset (b*nprocs + rank)*1024; independent
! block (b=3, 512 bytes) at 3*nprocs*1024 + rank*512.
! Byte j of block b holds mod(rank*7 + b*13 + j, 251).
!
! usage: basic_f08 OUTDIR
program basic_f08
  use mpi_f08
  implicit none
  integer, parameter :: BLK = 1024, IBLK = 512
  integer :: ierr, rank, nprocs, b, j, nlen
  type(MPI_File) :: fh
  type(MPI_Status) :: st
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=4096) :: outdir
  character(len=1) :: buf(BLK), rbuf(BLK)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() < 1) call die('usage: basic_f08 OUTDIR')
  call get_command_argument(1, outdir, nlen)

  call MPI_File_open(MPI_COMM_WORLD, outdir(1:nlen)//'/shared.dat', &
       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call die('MPI_File_open failed')

  do b = 0, 2
     do j = 0, BLK - 1
        buf(j + 1) = fill(rank, b, j)
     end do
     off = (int(b, MPI_OFFSET_KIND) * nprocs + rank) * BLK
     call MPI_File_write_at_all(fh, off, buf, BLK, MPI_BYTE, st, ierr)
     if (ierr /= MPI_SUCCESS) call die('MPI_File_write_at_all failed')
     if (b < 2) then
        call check_sum()
        call check_sum()
     end if
  end do

  do j = 0, IBLK - 1
     buf(j + 1) = fill(rank, 3, j)
  end do
  off = 3_MPI_OFFSET_KIND * nprocs * BLK + int(rank, MPI_OFFSET_KIND) * IBLK
  call MPI_File_write_at(fh, off, buf, IBLK, MPI_BYTE, st, ierr)
  if (ierr /= MPI_SUCCESS) call die('MPI_File_write_at failed')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  rbuf = achar(0)
  call MPI_File_read_at_all(fh, int(rank, MPI_OFFSET_KIND) * BLK, rbuf, BLK, &
       MPI_BYTE, st, ierr)
  if (ierr /= MPI_SUCCESS) call die('MPI_File_read_at_all failed')
  do j = 0, BLK - 1
     if (rbuf(j + 1) /= fill(rank, 0, j)) call die('read_at_all data mismatch')
  end do

  rbuf = achar(0)
  call MPI_File_read_at(fh, off, rbuf, IBLK, MPI_BYTE, st, ierr)
  if (ierr /= MPI_SUCCESS) call die('MPI_File_read_at failed')
  do j = 0, IBLK - 1
     if (rbuf(j + 1) /= fill(rank, 3, j)) call die('read_at data mismatch')
  end do

  call MPI_File_close(fh, ierr)
  if (ierr /= MPI_SUCCESS) call die('MPI_File_close failed')
  call MPI_Finalize(ierr)

contains

  character function fill(r, blk_no, j)
    integer, intent(in) :: r, blk_no, j
    fill = achar(mod(r * 7 + blk_no * 13 + j, 251))
  end function fill

  subroutine die(msg)
    character(len=*), intent(in) :: msg
    integer :: ie
    write (0, '(a)') 'basic_f08: '//msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ie)
    stop 1
  end subroutine die

  subroutine check_sum()
    integer :: isend, irecv, ie
    isend = rank
    irecv = -1
    call MPI_Allreduce(isend, irecv, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ie)
    if (irecv /= nprocs * (nprocs - 1) / 2) call die('Allreduce result mismatch')
  end subroutine check_sum

end program basic_f08
